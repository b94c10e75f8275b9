import Foundation

/// `kvcache-bench disk`: set, get-hit and get-miss for each value size, then
/// trimming and open time. Strategies are interleaved within each run and each
/// run starts from an empty directory.
struct DiskBenchmark {
    /// Add a strategy here to compare it.
    static let strategies: [DiskStrategyKind] = [
        RawSQLiteStrategy.kind,
        RawFileStrategy.kind,
        KVCacheDiskStrategy.kind(.mixed),
        KVCacheDiskStrategy.kind(.inline),
        KVCacheDiskStrategy.kind(.file),
        // SQLite's default page size, against the default 16 KiB, where it differs most.
        KVCacheDiskStrategy.kind(.mixed, pageSize: 4096, inOperations: false),
        YYStyleStrategy.kind,
        FilePerKeyStrategy.kind,
        FileManagerSweepStrategy.kind,
        URLCacheStrategy.kind,
    ]

    static let valueSizes = [1, 10, 20, 50, 100, 1024].map { $0 * 1024 }

    /// All sizes, or with --quick one inline, one around the threshold and one in a file.
    var valueSizes = Self.valueSizes

    /// Narrowing for profiling one figure (not needed for a normal run), from the environment:
    /// `KVCACHE_BENCH_DISK_SIZES=1,100` (value sizes in KB), `KVCACHE_BENCH_DISK_PARTS=ops,trim,open`,
    /// `KVCACHE_BENCH_DISK_OPEN_SIZES=1000000`, `KVCACHE_BENCH_DISK_STRATEGIES=raw,KVCache mixed`
    /// (strategies whose name starts with one of the prefixes).
    struct Selection {
        var sizes = DiskBenchmark.valueSizes
        var parts: Set<String> = ["ops", "trim", "open"]
        var openSizes: [Int]?
        var strategyPrefixes: [String]?

        init(environment: [String: String] = ProcessInfo.processInfo.environment) {
            func list(_ name: String) -> [String]? {
                environment[name].map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            }
            if let sizes = list("KVCACHE_BENCH_DISK_SIZES") { self.sizes = sizes.compactMap { Int($0) }.map { $0 * 1024 } }
            if let parts = list("KVCACHE_BENCH_DISK_PARTS") { self.parts = Set(parts) }
            openSizes = list("KVCACHE_BENCH_DISK_OPEN_SIZES")?.compactMap { Int($0) }
            strategyPrefixes = list("KVCACHE_BENCH_DISK_STRATEGIES")
        }

        func includes(_ kind: DiskStrategyKind) -> Bool {
            strategyPrefixes.map { $0.contains { kind.name.hasPrefix($0) } } ?? true
        }
    }

    static let selection = Selection()

    /// The strategies of `strategies` that the selection keeps.
    static var selectedStrategies: [DiskStrategyKind] { strategies.filter(selection.includes) }

    var runs: Int
    /// Bytes written per strategy per run and size; sets the op count per size.
    var bytesPerRun: Int
    var maximumOperations: Int
    var minimumOperations: Int
    var trimEntries: Int
    var openSizes: [Int]
    var workspace: Workspace

    /// Python's diskcache, run alongside when importable (and not turned off).
    var peer: PythonDiskcachePeer?

    init(options: CommonOptions, workspace: Workspace) {
        self.workspace = workspace
        runs = options.runCount
        switch options.scale {
        case .quick:
            (bytesPerRun, maximumOperations, minimumOperations) = (1 << 20, 100, 4)
            (trimEntries, openSizes) = (1_000, [1_000, 5_000])
            valueSizes = [1, 20, 1024].map { $0 * 1024 }
        case .summary:
            // The standard batches, at the sizes either side of the inline threshold and the ends.
            (bytesPerRun, maximumOperations, minimumOperations) = (24 << 20, 1_000, 16)
            (trimEntries, openSizes) = (20_000, [10_000])
            valueSizes = [1, 20, 100, 1024].map { $0 * 1024 }
        case .standard:
            // 24 MB per batch: at 8 MB a batch of 100 KB values was 81 sets, and the
            // fresh store's first commits weighed on it as much as the values did.
            (bytesPerRun, maximumOperations, minimumOperations) = (24 << 20, 1_000, 16)
            (trimEntries, openSizes) = (100_000, [10_000, 100_000])
        case .full:
            (bytesPerRun, maximumOperations, minimumOperations) = (48 << 20, 2_000, 32)
            (trimEntries, openSizes) = (100_000, [10_000, 100_000, 1_000_000])
        }
        if let sizes = Self.selection.openSizes { openSizes = sizes }
        if Self.selection.sizes != Self.valueSizes { valueSizes = Self.selection.sizes }
    }

    func run(into report: Report) throws {
        let parts = Self.selection.parts
        if parts.contains("ops") {
            for size in valueSizes {
                try measureOperations(valueSize: size, into: report)
            }
        }
        if parts.contains("trim") {
            try TrimBenchmark(entries: trimEntries, runs: runs, workspace: workspace).run(into: report)
        }
        if parts.contains("open") {
            try OpenTimeBenchmark(sizes: openSizes, runs: runs, workspace: workspace).run(into: report)
        }
    }

    static func label(bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MB" : "\(bytes >> 10) KB"
    }

    func operations(for size: Int) -> Int {
        min(maximumOperations, max(minimumOperations, bytesPerRun / size))
    }

    private func measureOperations(valueSize: Int, into report: Report) throws {
        let run = ValueSizeRun(strategies: Self.selectedStrategies.filter(\.inOperations), valueSize: valueSize,
                               operations: operations(for: valueSize), runs: runs, workspace: workspace,
                               peer: peer, minimumReads: 4 * maximumOperations)
        for comparison in try run.measure() {
            report.add(comparison)
        }
    }
}

struct ValidationFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
