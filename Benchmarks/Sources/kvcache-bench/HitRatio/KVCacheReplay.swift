import KVCache

/// KVCache's MemoryCache replayed as a policy: `value(forKey:)` on every request,
/// `setValue` on a miss, with `countLimit` as the capacity, no background trim and
/// values released inline, so every eviction happens on the request that causes it.
protocol KVCacheMemoryReplay: Policy {
    static var policy: EvictionPolicy { get }
    var cache: MemoryCache<Int, Int> { get }
    init(cache: MemoryCache<Int, Int>)
}

extension KVCacheMemoryReplay {
    init(capacity: Int) {
        self.init(capacity: capacity, readsTakeTheCacheLock: false)
    }

    /// `readsTakeTheCacheLock`: an age limit no entry reaches, which makes every read take the
    /// cache's lock and record its hit at once, with no read lane's buffer in between.
    init(capacity: Int, readsTakeTheCacheLock: Bool) {
        // Only a negative count limit is refused, and capacities here are positive.
        self.init(cache: try! MemoryCache(configuration: .init(
            countLimit: max(1, capacity), ageLimit: readsTakeTheCacheLock ? .seconds(365 * 86_400) : nil,
            autoTrimInterval: nil, releasesValuesInBackground: false, policy: Self.policy)))
    }

    /// The hits of one cache replaying `keys` on one thread (see `init(capacity:readsTakeTheCacheLock:)`).
    static func hits(replaying keys: [Int], capacity: Int, readsTakeTheCacheLock: Bool) -> Int {
        hits(replaying: keys, on: Self(capacity: capacity, readsTakeTheCacheLock: readsTakeTheCacheLock))
    }

    func access(_ key: Int) -> Bool {
        if cache.value(forKey: key) != nil { return true }
        cache.setValue(key, forKey: key)
        return false
    }

    /// The hits the cache itself counted (its statistics), to check the replay's own count.
    var recordedHits: Int { cache.statistics.hits }
}

/// MemoryCache with its default policy, the adaptive W-TinyLFU.
struct KVCacheAdaptiveReplay: KVCacheMemoryReplay {
    static let name = "KVCache MemoryCache (adaptive)"
    static let policy = EvictionPolicy.adaptive
    let cache: MemoryCache<Int, Int>
    init(cache: MemoryCache<Int, Int>) { self.cache = cache }
}

/// MemoryCache with `policy: .lru`.
struct KVCacheLRUReplay: KVCacheMemoryReplay {
    static let name = "KVCache MemoryCache (LRU)"
    static let policy = EvictionPolicy.lru
    let cache: MemoryCache<Int, Int>
    init(cache: MemoryCache<Int, Int>) { self.cache = cache }
}
