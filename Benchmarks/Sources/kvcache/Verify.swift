import ArgumentParser
import KVCache

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the cache: SQLite integrity, every value file present and of the right size, orphan files.",
        discussion: """
            Exit status 0 when the cache is healthy (or, with --repair, was repaired), \
            1 when problems were found and not repaired. Repairs remove entries whose file is \
            missing or of the wrong size, delete orphan files, recount the summary, and \
            reindex a damaged manifest, or move it to corrupt/ and start empty if that fails.
            """)

    @OptionGroup var location: CacheLocation
    @Flag(help: "Fix what is found.") var repair = false
    @Option(help: """
        Unreferenced files younger than this many seconds are not orphans: another process \
        may be about to commit them. Use 0 when no process is writing.
        """)
    var gracePeriod: Double = 60
    @Flag(help: "No progress on stderr.") var quiet = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if !(gracePeriod >= 0) { throw ValidationError("--grace-period must not be negative") }
    }

    func run() throws {
        let cache = try location.open()
        defer { cache.close() }
        // A manifest found corrupt at open was already moved aside and rebuilt: a problem
        // found, and repaired by opening.
        let rebuiltAtOpen = cache.statistics.rebuilds > 0
        let progress = ProgressPrinter(enabled: !quiet)
        let report = try cache.verify(repair: repair, orphanGracePeriod: gracePeriod) { progress.show($0) }
        progress.finish()
        let healthy = report.isHealthy && !rebuiltAtOpen
        if output.json {
            try Console.writeJSON(VerifyOutput(report, rebuiltAtOpen: rebuiltAtOpen))
        } else {
            VerifyOutput.printSummary(report, rebuiltAtOpen: rebuiltAtOpen, gracePeriod: gracePeriod)
        }
        if !healthy, !repair { throw ToolExit.no.code }
    }
}
