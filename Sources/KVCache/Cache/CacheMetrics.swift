#if Metrics
import Metrics

/// Package trait `Metrics`: exports what a ``Cache`` adds to its disk level's metrics
/// (`DiskMetrics`): the memory level's (`MemoryMetrics`), and the facade's loads and
/// refreshes, with the same dimension `cache` = the disk level's `metricsLabel`.
/// Reported whenever the disk level reports, so reads and writes pay nothing for it.
final class CacheMetrics: Sendable {
    private let memory: MemoryMetrics
    /// Counters exported as increases since the last report, by name.
    private let counters: [String: Counter]
    private let last = MutexBox<[String: Int]>([:])

    static let counterNames = [
        "kvcache_cache_disk_hits", "kvcache_cache_misses", "kvcache_cache_computations",
        "kvcache_cache_joined_loads", "kvcache_cache_refreshes", "kvcache_cache_failed_refreshes",
        "kvcache_cache_failed_background_writes", "kvcache_cache_fail_safe_serves",
    ]

    init(label: String, factory: any MetricsFactory) {
        memory = MemoryMetrics(label: label, factory: factory)
        let cache = [("cache", label)]
        counters = Dictionary(uniqueKeysWithValues: Self.counterNames.map {
            ($0, Counter(label: $0, dimensions: cache, factory: factory))
        })
    }

    /// Adds what changed since the last report, and records the memory level's totals.
    func report<Value>(_ statistics: Cache<Value>.Statistics) {
        memory.report(statistics.memory)
        let now: [String: Int] = [
            "kvcache_cache_disk_hits": statistics.diskHits,
            "kvcache_cache_misses": statistics.misses, "kvcache_cache_computations": statistics.computations,
            "kvcache_cache_joined_loads": statistics.joinedLoads, "kvcache_cache_refreshes": statistics.refreshes,
            "kvcache_cache_failed_refreshes": statistics.failedRefreshes,
            "kvcache_cache_failed_background_writes": statistics.failedBackgroundWrites,
            "kvcache_cache_fail_safe_serves": statistics.failSafeServes,
        ]
        let previous = last.withLock { last in
            defer { last = now }
            return last
        }
        for (name, counter) in counters {
            let increase = (now[name] ?? 0) - (previous[name] ?? 0)
            if increase > 0 { counter.increment(by: increase) }
        }
    }
}
#endif
