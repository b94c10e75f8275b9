import ArgumentParser
import Foundation
import KVCacheRedis

@main
struct KVCacheBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvcache-bench",
        abstract: "Compares KVCache with baseline cache strategies, side by side in one run.",
        discussion: """
            Every figure is the median of repeated runs with its spread, and a ratio to \
            the floor (the cheapest possible strategy) measured in the same run. Use a \
            release build. Progress goes to stderr, tables to stdout.
            """,
        subcommands: [All.self, Memory.self, Disk.self, Cache.self, Threshold.self, Concurrency.self,
                      HitRatio.self, Remote.self, Persist.self, HTTP.self, RenderReport.self, RemotePeer.self],
        defaultSubcommand: All.self)
}

extension KVCacheBench {
    struct All: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the hit-ratio, memory, disk, cache and concurrency benchmarks: a summary of about 5 minutes on 2 cores, writing kvcache-bench-report.html (--standard: each suite at its own size; --full: the long run with the threshold sweep).")
        @OptionGroup var options: CommonOptions

        @Flag(help: "Also sweep the inline threshold (always with --full).")
        var threshold = false

        @Option(help: ArgumentHelp("The hit-ratio traces' folder (default: ../shared/traces beside the repository).",
                                   valueName: "dir"))
        var traces: String?

        /// The report a summary run writes when no --report is given.
        static let summaryReport = "kvcache-bench-report.html"

        /// `options` as `all` runs them: the summary unless a size or a run count is asked for,
        /// and then with a report by default.
        static func resolved(_ options: CommonOptions) -> CommonOptions {
            var options = options
            options.summary = !options.quick && !options.standard && !options.full && options.runs == nil
            if options.summary, options.reportPath == nil { options.reportPath = summaryReport }
            return options
        }

        func run() throws {
            let options = Self.resolved(options)
            let sweeps = threshold || options.full
            let stages = sweeps ? 6 : 5
            try Session(options: options).run { report, workspace in
                // Deterministic and a few seconds (gli only with --quick): first, so its tables do
                // not wait behind the timed suites.
                Progress.log("== 1/\(stages) hit ratio")
                HitRatioBenchmark(options: options, traces: traces).run(into: report)
                Progress.log("== 2/\(stages) memory")
                MemoryBenchmark(options: options).run(into: report)
                Progress.log("== 3/\(stages) disk")
                try DiskBenchmark.run(options: options, workspace: workspace, into: report)
                Progress.log("== 4/\(stages) the Cache facade")
                try CacheBenchmark(options: options, workspace: workspace).run(into: report)
                Progress.log("== 5/\(stages) concurrency")
                try ConcurrencyBenchmark(options: options, workspace: workspace, report: report).run()
                if sweeps {
                    Progress.log("== 6/\(stages) inline threshold sweep")
                    try ThresholdSweep(options: options, workspace: workspace).run(into: report)
                }
            }
        }
    }

    struct Memory: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Memory caches: set, get hit (uniform, Zipf 0.9), get miss, set with eviction.")
        @OptionGroup var options: CommonOptions

        @Option(help: "Distinct keys (default 100000; 20000 with --quick, 200000 with --full).")
        var keys: Int?

        @Option(help: ArgumentHelp(
            "Thread counts to run every workload with, comma-separated (default 1,2; at most 64).",
            valueName: "1,2,4"))
        var threads: String = "1,2"

        @Option(help: "Timed passes over the keys in each get workload, after one untimed pass on every thread (default 3; 1 with --quick; at most 100).")
        var passes: Int?

        func validate() throws {
            _ = try Self.threadCounts(threads)
            if let passes, !(1...100).contains(passes) {
                throw ValidationError("--passes takes 1 to 100, not \(passes)")
            }
        }

        static func threadCounts(_ text: String) throws -> [Int] {
            let counts = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !counts.isEmpty, counts.allSatisfy({ $0 != nil && (1...64).contains($0!) }) else {
                throw ValidationError("--threads takes thread counts from 1 to 64, comma-separated (1,2,4), not '\(text)'")
            }
            return Array(Set(counts.map { $0! })).sorted()
        }

        func run() throws {
            let counts = try Self.threadCounts(threads)
            try Session(options: options).run { report, _ in
                var benchmark = MemoryBenchmark(options: options, keyCount: keys)
                benchmark.threadCounts = counts
                if let passes { benchmark.getPasses = passes }
                benchmark.run(into: report)
            }
        }
    }

    struct Disk: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disk stores: set, get hit, get miss by value size; trim; open time.")
        @OptionGroup var options: CommonOptions

        func run() throws {
            try Session(options: options).run { report, workspace in
                try DiskBenchmark.run(options: options, workspace: workspace, into: report)
            }
        }
    }
}

extension KVCacheBench {
    struct Cache: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The two-level Cache facade against its levels used by hand (Zipf 0.9, 90 % reads, 1–200 KB).")
        @OptionGroup var options: CommonOptions

        func run() throws {
            try Session(options: options).run { report, workspace in
                try CacheBenchmark(options: options, workspace: workspace).run(into: report)
            }
        }
    }
}

extension KVCacheBench {
    struct Concurrency: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disk get-hit throughput with 1, 2 and 4 threads; single-read latency beside slow work (a 256 MiB set, 1 MB sets and flushes, verify, another holder of the write lock).")
        @OptionGroup var options: CommonOptions

        func run() throws {
            try Session(options: options).run { report, workspace in
                try ConcurrencyBenchmark(options: options, workspace: workspace, report: report).run()
            }
        }
    }
}

extension KVCacheBench {
    struct Remote: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The Redis level against raw hiredis on the same server: 1 KB and 100 KB get/set, a batch of 100 gets, remote against local hits, invalidation latency between processes, local hits while the server is stopped.",
            discussion: """
                Without --redis it starts redis-server from PATH on a free loopback port (no \
                persistence) and kills it at the end; only then does it stop and kill the \
                server for the server-down rows. With --redis it uses keys of a namespace \
                unique to the run and removes them at the end.
                """)
        @OptionGroup var options: CommonOptions

        @Option(help: ArgumentHelp("A Redis server to use instead of one of the run's own (skips the server-down rows).",
                                   valueName: "redis://[:password@]host[:port][/db]"))
        var redis: String?

        @Option(help: "Gets and sets per run and strategy at 1 KB, a quarter at 100 KB; also the Cache hits per run (default 2000; 200 with --quick).")
        var operations: Int?

        @Option(help: "Batches of 100 gets per run and strategy (default 100; 10 with --quick).")
        var batches: Int?

        @Option(help: "Invalidations per run and kind, one in flight at a time (default 400; 20 with --quick).")
        var invalidations: Int?

        func validate() throws {
            for (name, value) in [("--operations", operations), ("--batches", batches), ("--invalidations", invalidations)] {
                if let value, value < 1 { throw ValidationError("\(name) must be at least 1") }
            }
            if let redis { _ = try RedisAddress(redis) }
        }

        func run() throws {
            try Session(options: options).run { report, workspace in
                try RemoteBenchmark(options: options, workspace: workspace, report: report, redisURL: redis,
                                    operations: operations, batches: batches, invalidations: invalidations).run()
            }
        }
    }
}

extension KVCacheBench {
    struct Threshold: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Inline (SQLite, 4 and 16 KiB pages) against file storage, 1 KB to 1 MB values, on --dir: recommends the inline threshold.")
        @OptionGroup var options: CommonOptions

        func run() throws {
            try Session(options: options).run { report, workspace in
                try ThresholdSweep(options: options, workspace: workspace).run(into: report)
            }
        }
    }
}

extension KVCacheBench {
    struct HitRatio: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hitratio",
            abstract: "Hit ratios on the shared traces (oltp, web07, web12, gli and the LIRS traces, at the sizes of their README): KVCache's MemoryCache against LRU, CLOCK, SIEVE, S3-FIFO, ARC, 2Q and W-TinyLFU.",
            discussion: """
                Deterministic: one replay per policy and size, no repeated runs (--runs is \
                ignored). --quick replays only gli. Without the traces it prints why and \
                exits 0.
                """)
        @OptionGroup var options: CommonOptions

        @Option(help: ArgumentHelp("The traces' folder (default: ../shared/traces beside the repository).",
                                   valueName: "dir"))
        var traces: String?

        @Option(name: .customLong("trace"), help: ArgumentHelp(
            "Replay only this trace (oltp, web07, web12, gli, multi1, ..., loop); repeatable.", valueName: "name"))
        var only: [String] = []

        @Option(help: ArgumentHelp(
            "Also replay KVCache's default policy with this many threads at once (2 to 64), against one thread.",
            valueName: "n"))
        var threads: Int?

        func validate() throws {
            if let threads, !(2...64).contains(threads) {
                throw ValidationError("--threads takes 2 to 64, not \(threads)")
            }
            let names = Trace.catalog.map(\.name)
            if let unknown = only.first(where: { !names.contains($0) }) {
                throw ValidationError("unknown trace \(unknown); the traces are \(names.joined(separator: ", "))")
            }
        }

        func run() throws {
            var benchmark = HitRatioBenchmark(options: options, traces: traces, only: only)
            benchmark.concurrentThreads = threads
            try Session(options: options).run { report, _ in
                benchmark.run(into: report)
            }
        }
    }
}

extension KVCacheBench {
    struct RenderReport: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "report",
            abstract: "Writes the HTML report (and the targets) of a run saved earlier with --json, without running anything.")

        @Argument(help: ArgumentHelp("A results file written by --json.", valueName: "results.json"))
        var json: String

        @Option(name: [.customLong("report"), .customLong("html")],
                help: ArgumentHelp("The HTML page to write.", valueName: "file.html"))
        var reportPath: String

        func run() throws {
            let report = try Report(json: json)
            Output.print(Targets.render(report.targets))
            try report.writeHTML(to: reportPath)
        }
    }
}

extension MemoryBenchmark {
    init(options: CommonOptions, keyCount: Int? = nil) {
        let defaultCount: Int
        switch options.scale {
        case .quick: defaultCount = 20_000
        case .summary, .standard: defaultCount = 100_000
        case .full: defaultCount = 200_000
        }
        self.init(keyCount: max(100, keyCount ?? defaultCount), runs: options.runCount)
        switch options.scale {
        case .quick: getPasses = 1
        case .summary: getPasses = 2
        case .standard, .full: break
        }
    }
}

extension HitRatioBenchmark {
    init(options: CommonOptions, traces: String? = nil, only: [String] = []) {
        let directory = traces.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? Trace.defaultDirectory()
        self.init(directory: directory, scale: options.scale, only: only)
    }
}

extension ThresholdSweep {
    init(options: CommonOptions, workspace: Workspace) {
        let sizing = DiskBenchmark(options: options, workspace: workspace)
        self.init(runs: sizing.runs, valueSizes: Self.valueSizes(options.scale), sizing: sizing, workspace: workspace)
    }
}
