import ArgumentParser
import Foundation

/// Options every subcommand takes.
struct CommonOptions: ParsableArguments {
    @Flag(help: "A smoke run of a few seconds (CI): tiny key counts and few runs; figures are not meaningful.")
    var quick = false

    @Flag(help: "The long version: more keys, bigger batches, 7 runs, 1 M-entry open times, the threshold sweep (25-30 minutes).")
    var full = false

    @Flag(help: "Each suite at the size its own subcommand runs it (for `all`, which otherwise runs a shorter summary: about 15 minutes).")
    var standard = false

    /// Set by `all` when none of --quick, --standard, --full and --runs is given: each suite at a
    /// size that keeps the whole run within about 5 minutes on 2 cores.
    var summary = false

    @Option(help: "Repeated runs per figure (default 5; 3 with --quick, 7 with --full).")
    var runs: Int?

    @Option(name: .customLong("json"), help: ArgumentHelp("Also write machine-readable results to this file.",
                                                         valueName: "file.json"))
    var jsonPath: String?

    @Option(name: [.customLong("report"), .customLong("html")],
            help: ArgumentHelp("Also write a self-contained HTML page with SVG charts to this file (--html is an alias).",
                               valueName: "file.html"))
    var reportPath: String?

    @Option(name: .customLong("dir"), help: ArgumentHelp(
        "Directory for the disk benchmarks (default: a new temporary directory).", valueName: "path"))
    var directory: String?

    @Flag(help: "Do not run python's diskcache as a peer in the disk tables, even when it is importable.")
    var noPeer = false

    /// How long a run is: the sizes below follow from it.
    enum Scale { case quick, summary, standard, full }

    var scale: Scale { quick ? .quick : full ? .full : summary ? .summary : .standard }

    var runCount: Int {
        if let runs { return max(1, runs) }
        switch scale {
        case .quick, .summary: return 3
        case .standard: return 5
        case .full: return 7
        }
    }

    func validate() throws {
        if let runs, runs < 1 { throw ValidationError("--runs must be at least 1") }
        if [quick, full, standard].filter({ $0 }).count > 1 {
            throw ValidationError("--quick, --standard and --full exclude each other")
        }
    }
}
