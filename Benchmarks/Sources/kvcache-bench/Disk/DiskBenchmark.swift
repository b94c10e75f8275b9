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
        YYStyleStrategy.kind,
        FilePerKeyStrategy.kind,
    ]

    static let valueSizes = [1, 10, 20, 50, 100, 1024].map { $0 * 1024 }

    /// All sizes, or with --quick one inline, one around the threshold and one in a file.
    var valueSizes = Self.valueSizes

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
        case .standard:
            // About a minute and a half on 2 cores, even where creating a file takes 0.5 ms.
            (bytesPerRun, maximumOperations, minimumOperations) = (8 << 20, 1_000, 16)
            (trimEntries, openSizes) = (10_000, [10_000, 100_000])
        case .full:
            (bytesPerRun, maximumOperations, minimumOperations) = (48 << 20, 2_000, 32)
            (trimEntries, openSizes) = (100_000, [10_000, 100_000, 1_000_000])
        }
    }

    func run(into report: Report) throws {
        guard MD5.selfTest() else { throw ValidationFailure("MD5 self-test failed") }
        for size in valueSizes {
            try measureOperations(valueSize: size, into: report)
        }
        try TrimBenchmark(entries: trimEntries, runs: runs, workspace: workspace).run(into: report)
        try OpenTimeBenchmark(sizes: openSizes, runs: runs, workspace: workspace).run(into: report)
    }

    static func label(bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MB" : "\(bytes >> 10) KB"
    }

    func operations(for size: Int) -> Int {
        min(maximumOperations, max(minimumOperations, bytesPerRun / size))
    }

    private func measureOperations(valueSize: Int, into report: Report) throws {
        let run = ValueSizeRun(strategies: Self.strategies, valueSize: valueSize,
                               operations: operations(for: valueSize), runs: runs, workspace: workspace,
                               peer: peer)
        for comparison in try run.measure() {
            report.add(comparison)
        }
    }
}

struct ValidationFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
