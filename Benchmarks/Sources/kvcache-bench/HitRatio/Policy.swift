/// An eviction policy replayed on a trace: a cache of `capacity` entries, cold at
/// start, that inserts every key it misses (count-based, no values, no weights).
/// (`SendableMetatype`: the benchmark's table of policies holds their types.)
protocol Policy: SendableMetatype {
    /// The name in the tables and the report.
    static var name: String { get }
    init(capacity: Int)
    /// Requests `key`: true on a hit; on a miss the key is inserted, evicting as the policy decides.
    mutating func access(_ key: Int) -> Bool
}

extension Policy {
    /// The hits of a fresh cache of `capacity` entries on `keys`, in order.
    static func hits(replaying keys: [Int], capacity: Int) -> Int {
        hits(replaying: keys, on: Self(capacity: capacity))
    }

    /// The hits of `policy` on `keys`, in order.
    static func hits(replaying keys: [Int], on policy: Self) -> Int {
        var policy = policy
        var hits = 0
        for key in keys where policy.access(key) { hits += 1 }
        return hits
    }
}
