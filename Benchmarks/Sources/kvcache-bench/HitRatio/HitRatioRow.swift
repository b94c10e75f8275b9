/// One trace at one cache size: every policy's hits on the whole trace, its hit
/// ratio and its gap to the row's best, as `--json` writes it.
struct HitRatioRow: Codable, Sendable, Equatable {
    var trace: String
    /// Entries the cache holds (count-based).
    var capacity: Int
    var requests: Int
    var distinctKeys: Int
    var cells: [Cell]

    struct Cell: Codable, Sendable, Equatable {
        var policy: String
        /// One of KVCache's own policies, run through MemoryCache (not a reference implementation).
        var isKVCache: Bool
        /// KVCache's default policy: the one the targets check.
        var isDefault: Bool
        var hits: Int
        /// Hits ÷ requests, in per cent.
        var hitRatio: Double
        /// `hitRatio` minus the row's best, in points (0 for the best, else negative).
        var gapToBest: Double
    }

    /// Fills in the ratios and gaps of `hits` (policy, is KVCache, is default, hits).
    init(trace: String, capacity: Int, requests: Int, distinctKeys: Int,
         hits: [(policy: String, isKVCache: Bool, isDefault: Bool, hits: Int)]) {
        self.trace = trace
        self.capacity = capacity
        self.requests = requests
        self.distinctKeys = distinctKeys
        let ratios = hits.map { 100 * Double($0.hits) / Double(max(1, requests)) }
        let best = ratios.max() ?? 0
        cells = zip(hits, ratios).map { entry, ratio in
            Cell(policy: entry.policy, isKVCache: entry.isKVCache, isDefault: entry.isDefault, hits: entry.hits,
                 hitRatio: ratio, gapToBest: ratio - best)
        }
    }

    /// The best hit ratio of the row, any policy.
    var best: Double { cells.map(\.hitRatio).max() ?? 0 }

    /// The best reference implementation of the row (not KVCache's).
    var bestReference: Cell? {
        cells.filter { !$0.isKVCache }.max { $0.hitRatio < $1.hitRatio }
    }

    /// The cell of KVCache's default policy.
    var kvcacheDefault: Cell? { cells.first { $0.isKVCache && $0.isDefault } }

    /// A cell holds the row's best (within rounding to the printed 0.01).
    func isBest(_ cell: Cell) -> Bool { cell.gapToBest > -0.005 }
}
