import ArgumentParser
import Foundation

/// Options every subcommand takes.
struct CommonOptions: ParsableArguments {
    @Flag(help: "A smoke run of a few seconds: tiny key counts and few runs.")
    var quick = false

    @Option(help: "Repeated runs per figure (default 7, or 3 with --quick).")
    var runs: Int?

    @Option(name: .customLong("json"), help: "Also write machine-readable results to this file.")
    var jsonPath: String?

    @Option(name: .customLong("html"), help: "Also write an HTML report with SVG charts to this file.")
    var htmlPath: String?

    @Option(name: .customLong("dir"), help: "Directory for the disk benchmarks (default: a new temporary directory).")
    var directory: String?

    var runCount: Int { max(1, runs ?? (quick ? 3 : 7)) }

    func validate() throws {
        if let runs, runs < 1 { throw ValidationError("--runs must be at least 1") }
    }
}
