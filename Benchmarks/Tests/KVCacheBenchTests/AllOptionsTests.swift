import ArgumentParser
import Testing
@testable import kvcache_bench

/// `kvcache-bench` with no arguments runs the summary (3 runs, fewer sizes) and writes a
/// report; a size flag or a run count runs what it names, with no report unless asked.
@Suite struct AllOptionsTests {
    private func resolved(_ arguments: [String]) throws -> CommonOptions {
        KVCacheBench.All.resolved(try CommonOptions.parse(arguments))
    }

    @Test func noArgumentsRunTheSummaryWithAReport() throws {
        let options = try resolved([])
        #expect(options.scale == .summary)
        #expect(options.runCount == 3)
        #expect(options.reportPath == KVCacheBench.All.summaryReport)
        #expect(try resolved(["--report", "mine.html"]).reportPath == "mine.html")
    }

    @Test func aSizeOrARunCountRunsWhatItNames() throws {
        #expect(try resolved(["--standard"]).scale == .standard)
        #expect(try resolved(["--standard"]).runCount == 5)
        #expect(try resolved(["--full"]).scale == .full)
        #expect(try resolved(["--quick"]).scale == .quick)
        let counted = try resolved(["--runs", "5"])
        #expect(counted.scale == .standard && counted.runCount == 5 && counted.reportPath == nil)
        // Subcommands parse the same options without resolving: their default is the standard size.
        #expect(try CommonOptions.parse([]).scale == .standard)
    }

    @Test func sizesExcludeEachOther() {
        for pair in [["--quick", "--full"], ["--quick", "--standard"], ["--standard", "--full"]] {
            #expect(throws: (any Error).self) { _ = try CommonOptions.parse(pair) }
        }
    }
}
