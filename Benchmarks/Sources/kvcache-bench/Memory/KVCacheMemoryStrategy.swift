import KVCache

/// KVCache's `MemoryCache` with its default configuration (the adaptive policy,
/// W-TinyLFU; evicts one entry per insertion over the limit, releases values in the
/// background).
class KVCacheMemoryStrategy: MemoryStrategy, @unchecked Sendable {
    class var name: String { "KVCache MemoryCache" }
    class var policy: EvictionPolicy { .adaptive }

    private let cache: MemoryCache<String, SmallValue>

    required init(countLimit: Int?) {
        // Only a negative count limit is refused, and the benchmarks' limits are positive.
        cache = try! MemoryCache(configuration: .init(countLimit: countLimit ?? .max, policy: Self.policy))
    }

    func setValue(_ value: SmallValue, forKey key: String) {
        cache.setValue(value, forKey: key)
    }

    func value(forKey key: String) -> SmallValue? {
        cache.value(forKey: key)
    }

    func drain() {
        cache.removeAll()
        cache.waitForBackgroundWork()
    }
}

/// `MemoryCache` with `policy: .lru` (exact LRU).
final class KVCacheLRUMemoryStrategy: KVCacheMemoryStrategy, @unchecked Sendable {
    override class var name: String { "KVCache MemoryCache (LRU)" }
    override class var policy: EvictionPolicy { .lru }
}
