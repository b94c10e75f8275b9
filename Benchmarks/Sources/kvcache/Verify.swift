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
    @Option(parsing: .unconditional, help: """
        Unreferenced files younger than this are not orphans: another process may be about \
        to commit them. Seconds, or a number with ms, s, m, h or d. Use 0 when no process is writing.
        """)
    var gracePeriod = DurationArgument(argument: "60")!
    @Flag(help: "No progress on stderr.") var quiet = false
    @OptionGroup var output: OutputOptions

    func run() throws {
        // Without --repair it only reads: a manifest too damaged to open read-only is
        // a problem found (exit 1), left for --repair to fix.
        let cache: DiskCache
        do {
            cache = try location.open(readOnly: !repair)
        } catch let error as KVCacheError where error.code == .corrupt {
            var report = DiskCache.VerificationReport()
            report.integrityErrors = ["\(error.path ?? location.directory): \(error.message)"]
            if output.json {
                try Console.writeJSON(VerifyOutput(report, rebuiltAtOpen: false))
            } else {
                VerifyOutput.printSummary(report, rebuiltAtOpen: false, gracePeriod: gracePeriod)
                Console.writeError("kvcache: the manifest is damaged; run verify --repair to rebuild it")
            }
            throw ToolExit.no.code
        }
        defer { try? cache.close() }
        // A manifest found corrupt at open was already moved aside and rebuilt: a problem
        // found, and repaired by opening.
        let rebuiltAtOpen = cache.statistics.rebuilds > 0
        let progress = ProgressPrinter(enabled: !quiet)
        let report = try cache.verify(repair: repair, orphanGracePeriod: gracePeriod.duration) { progress.show($0) }
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
