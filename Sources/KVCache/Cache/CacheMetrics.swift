#if Metrics
import Metrics

/// Package trait `Metrics`: exports what a ``Cache`` adds to its disk level's metrics
/// (`DiskMetrics`): the memory level's counters and totals, and the facade's loads and
/// refreshes, with the same dimension `cache` = the disk level's `metricsLabel`.
/// Reported whenever the disk level reports, so reads and writes pay nothing for it.
final class CacheMetrics: Sendable {
    /// Counters exported as increases since the last report, by name.
    private let counters: [String: Counter]
    private let evictions: [EvictionReason: Counter]
    private let entries: Gauge
    private let cost: Gauge
    private let last = MutexBox<(counters: [String: Int], evictions: [EvictionReason: Int])>(([:], [:]))

    static let counterNames = [
        "kvcache_memory_hits", "kvcache_memory_misses", "kvcache_memory_sets",
        "kvcache_cache_disk_hits", "kvcache_cache_misses", "kvcache_cache_computations",
        "kvcache_cache_joined_loads", "kvcache_cache_refreshes", "kvcache_cache_failed_refreshes",
        "kvcache_cache_failed_background_writes", "kvcache_cache_fail_safe_serves",
    ]

    init(label: String, factory: any MetricsFactory) {
        let cache = [("cache", label)]
        counters = Dictionary(uniqueKeysWithValues: Self.counterNames.map {
            ($0, Counter(label: $0, dimensions: cache, factory: factory))
        })
        evictions = Dictionary(uniqueKeysWithValues: EvictionReason.allCases.map { reason in
            (reason, Counter(label: "kvcache_memory_evictions", dimensions: cache + [("reason", reason.rawValue)],
                             factory: factory))
        })
        entries = Gauge(label: "kvcache_memory_entries", dimensions: cache, factory: factory)
        cost = Gauge(label: "kvcache_memory_cost", dimensions: cache, factory: factory)
    }

    /// Adds what changed since the last report, and records the memory level's totals.
    func report<Value>(_ statistics: Cache<Value>.Statistics) {
        let now: [String: Int] = [
            "kvcache_memory_hits": statistics.memory.hits, "kvcache_memory_misses": statistics.memory.misses,
            "kvcache_memory_sets": statistics.memory.sets, "kvcache_cache_disk_hits": statistics.diskHits,
            "kvcache_cache_misses": statistics.misses, "kvcache_cache_computations": statistics.computations,
            "kvcache_cache_joined_loads": statistics.joinedLoads, "kvcache_cache_refreshes": statistics.refreshes,
            "kvcache_cache_failed_refreshes": statistics.failedRefreshes,
            "kvcache_cache_failed_background_writes": statistics.failedBackgroundWrites,
            "kvcache_cache_fail_safe_serves": statistics.failSafeServes,
        ]
        let previous = last.withLock { last in
            defer { last = (now, statistics.memory.evictions) }
            return last
        }
        for (name, counter) in counters {
            let increase = (now[name] ?? 0) - (previous.counters[name] ?? 0)
            if increase > 0 { counter.increment(by: increase) }
        }
        for (reason, counter) in evictions {
            let increase = (statistics.memory.evictions[reason] ?? 0) - (previous.evictions[reason] ?? 0)
            if increase > 0 { counter.increment(by: increase) }
        }
        entries.record(statistics.memory.count)
        cost.record(statistics.memory.totalCost)
    }
}
#endif
