/// Which entries a ``MemoryCache`` evicts when a limit is reached.
///
/// ```swift
/// let cache = try MemoryCache<String, Data>(configuration: .init(countLimit: 10_000, policy: .lru))
/// ```
public struct EvictionPolicy: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Hashable {
        case lru
        case adaptive(seed: UInt64)
    }

    let kind: Kind

    /// Exact least-recently-used order: the entry read or written longest ago leaves first.
    /// Best when recent use predicts the next use and nothing else does; a scan of
    /// keys read once flushes the whole cache.
    ///
    /// Exactness has a price: every read moves its entry in one shared list, so every
    /// access, read or write, takes the cache's one lock, and reads on several threads
    /// run one at a time. Choose it when the cache is used from one thread or a few,
    /// or when evicting exactly the least recently used entry matters more than
    /// throughput; otherwise the default ``adaptive`` policy reads in parallel.
    public static let lru = EvictionPolicy(kind: .lru)

    /// The default: an adaptive W-TinyLFU. A new entry waits in a small recency
    /// window; when it leaves the window it enters the main space only if it was
    /// used more often lately than the entry it would displace, by one to three uses
    /// (how many is learnt as the cache runs; a compact frequency sketch, which forgets
    /// over time, counts every key's uses). The main space is
    /// a segmented LRU, and the window's share of the limits is adapted while the
    /// cache runs, toward the share that gives more hits: under a count limit, by
    /// simulating a smaller and a larger window on a sample of the keys (at most
    /// 1,024 sampled entries each, under 60 KB a cache; every key of a smaller cache);
    /// under a cost limit alone, by hill climbing on the cache's own hit rate. Scans
    /// and one-off keys cannot flush the entries that are used again.
    ///
    /// Every limit is honoured: the window and the main space each get their share
    /// of the count limit and of the cost limit. Given the same operations in the same
    /// order from one thread, the cache evicts the same entries in every run for keys
    /// that are integers, strings or the ``Cache``'s keys; other key types are counted
    /// by their `hashValue`, which Swift seeds per process. (Reads are told to the
    /// policy in batches per thread, so calls from several threads, or from a task
    /// that resumes on another thread, may be told in another order; and while one
    /// thread tells the policy its batch, another thread's reads that find their own
    /// batch full are not told at all: the policy then sees a sample of the reads,
    /// counted in ``MemoryCache/Statistics/droppedReads``.)
    public static let adaptive = EvictionPolicy(kind: .adaptive(seed: 0))

    /// The adaptive policy with its frequency sketch's hashes mixed with `seed`, so
    /// that two caches (or two processes) do not share which keys collide.
    public static func adaptive(seed: UInt64) -> EvictionPolicy {
        EvictionPolicy(kind: .adaptive(seed: seed))
    }

    /// "lru", "adaptive" or "adaptive(seed: 7)".
    public var description: String {
        switch kind {
        case .lru: "lru"
        case .adaptive(let seed): seed == 0 ? "adaptive" : "adaptive(seed: \(seed))"
        }
    }
}
