import ArgumentParser
import Foundation

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
        subcommands: [All.self, Memory.self, Disk.self, Cache.self, Threshold.self],
        defaultSubcommand: All.self)
}

extension KVCacheBench {
    struct All: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run the memory, disk and cache benchmarks.")
        @OptionGroup var options: CommonOptions

        func run() throws {
            try Session(options: options).run { report, workspace in
                MemoryBenchmark(options: options).run(into: report)
                try DiskBenchmark(options: options, workspace: workspace).run(into: report)
                try CacheBenchmark(options: options, workspace: workspace).run(into: report)
            }
        }
    }

    struct Memory: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Memory caches: set, get hit (uniform, Zipf 0.9), get miss, set with eviction.")
        @OptionGroup var options: CommonOptions

        @Option(help: "Distinct keys (default 200000, or 20000 with --quick).")
        var keys: Int?

        func run() throws {
            try Session(options: options).run { report, _ in
                MemoryBenchmark(options: options, keyCount: keys).run(into: report)
            }
        }
    }

    struct Disk: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disk stores: set, get hit, get miss by value size; trim; open time.")
        @OptionGroup var options: CommonOptions

        func run() throws {
            try Session(options: options).run { report, workspace in
                try DiskBenchmark(options: options, workspace: workspace).run(into: report)
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
    struct Threshold: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Inline (SQLite, 4 and 16 KiB pages) against file storage by value size: the inline threshold.")
        @OptionGroup var options: CommonOptions

        func run() throws {
            try Session(options: options).run { report, workspace in
                let sizing = DiskBenchmark(options: options, workspace: workspace)
                try ThresholdSweep(runs: sizing.runs, sizing: sizing, workspace: workspace).run(into: report)
            }
        }
    }
}

extension MemoryBenchmark {
    init(options: CommonOptions, keyCount: Int? = nil) {
        self.init(keyCount: max(100, keyCount ?? (options.quick ? 20_000 : 200_000)), runs: options.runCount)
    }
}
