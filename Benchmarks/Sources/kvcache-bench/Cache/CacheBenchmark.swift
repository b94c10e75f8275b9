import Foundation
import KVCache

/// `kvcache-bench cache`: the `Cache` facade against its two levels used by
/// hand, on one realistic mix: Zipf(0.9) keys, 90 % reads, 10 % writes, values
/// of 1–200 KB (log-uniform per key, fixed seed). Every strategy starts each run
/// from an empty directory filled with every key (untimed), then replays the
/// same operations; strategies alternate order from run to run.
struct CacheBenchmark {
    static let strategies: [TwoLevelStrategyKind] = [
        HandUsedLevels.kind,
        FacadeStrategy.kind(.immediate),
        FacadeStrategy.kind(.background),
    ]

    var keyCount: Int
    var operations: Int
    var runs: Int
    var workspace: Workspace

    init(options: CommonOptions, workspace: Workspace) {
        self.workspace = workspace
        keyCount = options.quick ? 200 : 2_000
        operations = options.quick ? 1_000 : 20_000
        runs = max(1, options.runs ?? (options.scale == .quick || options.scale == .summary ? 3 : 7))
    }

    func run(into report: Report) throws {
        let workload = CacheWorkload(keyCount: keyCount, operations: operations)
        let groups: [(String, Int64)] = [
            ("memory 10 % of the bytes", workload.totalBytes / 10),
            ("memory holds everything", .max),
        ]
        for (group, costLimit) in groups {
            try measure(workload, group: group, costLimit: costLimit, into: report)
        }
    }

    private func measure(_ workload: CacheWorkload, group: String, costLimit: Int64, into report: Report) throws {
        let memory = MemoryCache<String, Data>.Configuration(costLimit: costLimit)
        // Memory hits take about 0.1 µs: one pass would last a few milliseconds, too short to time.
        let readPasses = costLimit == .max ? 50 : 5
        var mixes = SampleSet(), reads = SampleSet()
        var facadeStatistics: Cache<Data>.Statistics?
        for run in 0..<runs {
            Progress.log("cache: \(group), \(operations) ops, run \(run + 1)/\(runs)")
            let order = run.isMultiple(of: 2) ? Self.strategies : Self.strategies.reversed()
            for kind in order {
                let directory = try workspace.makeDirectory("cache-\(kind.name.filter(\.isLetter))")
                defer { workspace.remove(directory) }
                let strategy = try kind.open(directory, memory)
                defer { strategy.close() }
                for key in workload.keys.indices { try strategy.setValue(workload.value(forKey: key), forKey: workload.keys[key]) }
                try strategy.finish()

                var missing = 0
                let time = try Clock.measure {
                    for operation in workload.operations {
                        let key = workload.keys[operation.key]
                        if operation.isWrite {
                            try strategy.setValue(workload.value(forKey: operation.key), forKey: key)
                        } else if try strategy.value(forKey: key) == nil {
                            missing += 1
                        }
                    }
                    try strategy.finish()
                }
                mixes.record(kind.name, isFloor: kind.isFloor, nanoseconds: time, operations: operations)

                let readTime = try Clock.measure {
                    for _ in 0..<readPasses {
                        for operation in workload.operations where try strategy.value(forKey: workload.keys[operation.key]) == nil {
                            missing += 1
                        }
                    }
                }
                reads.record(kind.name, isFloor: kind.isFloor, nanoseconds: readTime, operations: operations * readPasses)
                if missing != 0 { Progress.log("warning: \(kind.name) missed \(missing) stored keys") }
                if let facade = strategy as? FacadeStrategy, facade.diskWrite == .immediate {
                    facadeStatistics = facade.cache.statistics
                }
            }
        }
        var comparison = Comparison(suite: "cache", group: group, workload: "mix 90 % get", operationsPerRun: operations)
        mixes.fill(&comparison)
        var readOnly = Comparison(suite: "cache", group: group, workload: "get only", operationsPerRun: operations * readPasses)
        reads.fill(&readOnly)
        readOnly.notes.append("the same keys, reads only, right after the mix, \(readPasses) passes")
        comparison.notes.append(String(
            format: "%d keys, Zipf 0.9, values 1–200 KB (%.1f MB in all), memory cost limit %@",
            workload.keys.count, Double(workload.totalBytes) / 1e6,
            costLimit == .max ? "none" : String(format: "%.1f MB", Double(costLimit) / 1e6)))
        if let statistics = facadeStatistics {
            let reads = max(1, statistics.hits + statistics.misses)
            comparison.notes.append(String(
                format: "reads in the mix and get-only passes answered by memory %.0f %%, by disk %.0f %%",
                100 * Double(statistics.memoryHits) / Double(reads), 100 * Double(statistics.diskHits) / Double(reads)))
        }
        comparison.notes.append(Self.overhead(in: comparison) + " (goal ≤ 10 %)")
        readOnly.notes.append(Self.overhead(in: readOnly))
        report.add(comparison)
        report.add(readOnly)
    }
}

extension CacheBenchmark {
    /// The facade's median over the hand-used levels' median, as a percentage.
    static func overhead(in comparison: Comparison) -> String {
        guard let hand = comparison.rows.first(where: \.isFloor)?.nanosecondsPerOperation.median,
              let facade = comparison.rows.first(where: { $0.strategy == "Cache" })?.nanosecondsPerOperation.median,
              hand > 0 else { return "facade overhead: n/a" }
        return String(format: "facade overhead: %+.1f %% over the levels used by hand", 100 * (facade / hand - 1))
    }
}

/// Keys, per-key values and the operation sequence, fixed by seeds.
struct CacheWorkload {
    struct Operation {
        var key: Int
        var isWrite: Bool
    }

    let keys: [String]
    let operations: [Operation]
    let totalBytes: Int64
    private let sizes: [Int]
    /// One random buffer; each key's value is a prefix of it (a slice, not a copy).
    private let buffer: Data

    init(keyCount: Int, operations count: Int) {
        keys = (0..<keyCount).map { String(format: "cache-key-%07d", $0) }
        var random = SplitMix64(seed: 0xCAC4E)
        let low = log(1024.0), high = log(200.0 * 1024)
        sizes = (0..<keyCount).map { _ in Int(exp(low + (high - low) * random.nextUnit())) }
        totalBytes = sizes.reduce(0) { $0 + Int64($1) }
        buffer = Data((0..<(200 * 1024)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        let indices = Zipf(population: keyCount, exponent: 0.9, seed: 0xCAC4E).indices(count: count, seed: 0x5EED)
        operations = indices.map { Operation(key: $0, isWrite: random.nextUnit() < 0.1) }
    }

    func value(forKey index: Int) -> Data { buffer.prefix(sizes[index]) }
}
