import KVCache

/// KVCache's MemoryCache replayed as a policy: `value(forKey:)` on every request,
/// `setValue` on a miss, with `countLimit` as the capacity, no background trim and
/// values released inline, so every eviction happens on the request that causes
/// it. Exact LRU today (issue 15 adds an adaptive policy).
final class KVCacheMemoryReplay: Policy {
    static let name = "KVCache MemoryCache (LRU)"
    private let cache: MemoryCache<Int, Int>

    init(capacity: Int) {
        // Only a negative count limit is refused, and capacities here are positive.
        cache = try! MemoryCache(configuration: .init(countLimit: max(1, capacity), autoTrimInterval: nil,
                                                     releasesValuesInBackground: false))
    }

    func access(_ key: Int) -> Bool {
        if cache.value(forKey: key) != nil { return true }
        cache.setValue(key, forKey: key)
        return false
    }

    /// The hits the cache itself counted (its statistics), to check the replay's own count.
    var recordedHits: Int { cache.statistics.hits }
}
