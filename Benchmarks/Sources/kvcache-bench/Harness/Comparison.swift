/// One workload measured for several strategies side by side in the same run,
/// with each strategy's median compared to the floor's.
struct Comparison: Codable, Sendable {
    /// "memory", "disk", "disk-trim", "disk-open".
    var suite: String
    /// The variable held fixed across the rows, e.g. "1 thread" or "1 KB".
    var group: String
    var workload: String
    /// The value size in bytes, for the disk comparisons by value size.
    var valueSize: Int?
    /// Operations timed per run; figures are nanoseconds per operation.
    var operationsPerRun: Int
    /// What the figures count: "ns" (per operation) unless stated, e.g. "bytes/entry".
    var unit = Comparison.nanoseconds
    var rows: [Row] = []
    /// The floor the ratios are taken against: the fastest floor row.
    var floor: String?
    var notes: [String] = []

    struct Row: Codable, Sendable {
        var strategy: String
        var isFloor: Bool
        /// Operations per run when a strategy ran fewer than the others (NSCache).
        var operationsPerRun: Int
        var nanosecondsPerOperation: Summary
        var samples: [Double]
        var ratioToFloor: Double?
        /// Single-operation latency percentiles, when the workload records them.
        var latency: Latency?
    }

    static let nanoseconds = "ns"

    init(suite: String, group: String, workload: String, operationsPerRun: Int) {
        self.suite = suite
        self.group = group
        self.workload = workload
        self.operationsPerRun = operationsPerRun
    }

    /// Records one strategy's runs, given in nanoseconds per operation.
    mutating func add(_ strategy: String, isFloor: Bool, samples: [Double], operationsPerRun: Int? = nil,
                      latencies: [UInt64] = []) {
        guard !samples.isEmpty else { return }
        rows.append(Row(
            strategy: strategy, isFloor: isFloor,
            operationsPerRun: operationsPerRun ?? self.operationsPerRun,
            nanosecondsPerOperation: Summary(samples), samples: samples, ratioToFloor: nil,
            latency: Latency(latencies)))
        computeRatios()
    }

    private mutating func computeRatios() {
        let floorRow = rows.filter(\.isFloor).min { $0.nanosecondsPerOperation.median < $1.nanosecondsPerOperation.median }
        floor = floorRow?.strategy
        guard let base = floorRow?.nanosecondsPerOperation.median, base > 0 else { return }
        for index in rows.indices {
            rows[index].ratioToFloor = rows[index].nanosecondsPerOperation.median / base
        }
    }
}

/// Collects samples per strategy while runs interleave the strategies.
struct SampleSet {
    private(set) var order: [String] = []
    private var samples: [String: [Double]] = [:]
    private var floors: Set<String> = []
    private var operations: [String: Int] = [:]
    private var latencies: [String: [UInt64]] = [:]

    mutating func record(_ strategy: String, isFloor: Bool, nanoseconds: UInt64, operations count: Int,
                         latencies: [UInt64] = []) {
        record(strategy, isFloor: isFloor, perOperation: Double(nanoseconds) / Double(max(count, 1)),
               operations: count, latencies: latencies)
    }

    /// Records a figure already divided by the operation count (or not a time at all).
    mutating func record(_ strategy: String, isFloor: Bool, perOperation value: Double, operations count: Int,
                         latencies: [UInt64] = []) {
        if samples[strategy] == nil {
            order.append(strategy)
            if isFloor { floors.insert(strategy) }
        }
        samples[strategy, default: []].append(value)
        operations[strategy] = count
        self.latencies[strategy, default: []].append(contentsOf: latencies)
    }

    /// Each run's figure for `strategy` divided by the floor's in the same run: on a machine
    /// that changes speed between runs, their median is steadier than the medians' ratio.
    func ratiosToFloorPerRun(of strategy: String) -> [Double] {
        guard let floor = order.first(where: floors.contains), let floorSamples = samples[floor],
              let own = samples[strategy] else { return [] }
        return zip(own, floorSamples).map { $0 / $1 }
    }

    func fill(_ comparison: inout Comparison) {
        for strategy in order {
            comparison.add(strategy, isFloor: floors.contains(strategy),
                           samples: samples[strategy] ?? [], operationsPerRun: operations[strategy],
                           latencies: latencies[strategy] ?? [])
        }
    }
}
