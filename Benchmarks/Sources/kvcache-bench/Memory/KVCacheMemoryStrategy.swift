import KVCache

/// KVCache's `MemoryCache` with its default configuration (O(1) LRU, evicts
/// one entry per insertion over the limit, releases values in the background).
final class KVCacheMemoryStrategy: MemoryStrategy, @unchecked Sendable {
    static let name = "KVCache MemoryCache"

    private let cache: MemoryCache<String, SmallValue>

    init(countLimit: Int?) {
        // Only a negative count limit is refused, and the benchmarks' limits are positive.
        cache = try! MemoryCache(configuration: .init(countLimit: countLimit ?? .max))
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
