#if Metrics
import Metrics

/// Package trait `Metrics`: exports one memory cache's statistics to swift-metrics, as the
/// increase of each counter since the last report and the totals as gauges, with the
/// dimension `cache` = the label. Reports come from the statistics (periodically and on
/// `reportMetrics()`), so reads and writes pay nothing for them.
final class MemoryMetrics: Sendable {
    private let hits: Counter
    private let misses: Counter
    private let sets: Counter
    private let droppedReads: Counter
    private let evictions: [EvictionReason: Counter]
    private let entries: Gauge
    private let cost: Gauge
    private let last = MutexBox<Snapshot?>(nil)

    /// The counters of the last report.
    private struct Snapshot {
        var hits = 0, misses = 0, sets = 0, droppedReads = 0
        var evictions: [EvictionReason: Int] = [:]
    }

    init(label: String, factory: any MetricsFactory) {
        let cache = [("cache", label)]
        hits = Counter(label: "kvcache_memory_hits", dimensions: cache, factory: factory)
        misses = Counter(label: "kvcache_memory_misses", dimensions: cache, factory: factory)
        sets = Counter(label: "kvcache_memory_sets", dimensions: cache, factory: factory)
        droppedReads = Counter(label: "kvcache_memory_dropped_reads", dimensions: cache, factory: factory)
        evictions = Dictionary(uniqueKeysWithValues: EvictionReason.allCases.map { reason in
            (reason, Counter(label: "kvcache_memory_evictions", dimensions: cache + [("reason", reason.rawValue)],
                             factory: factory))
        })
        entries = Gauge(label: "kvcache_memory_entries", dimensions: cache, factory: factory)
        cost = Gauge(label: "kvcache_memory_cost", dimensions: cache, factory: factory)
    }

    /// Adds what changed since the last report, and records the totals.
    func report<Key, Value>(_ statistics: MemoryCache<Key, Value>.Statistics) {
        let now = Snapshot(hits: statistics.hits, misses: statistics.misses, sets: statistics.sets,
                           droppedReads: statistics.droppedReads, evictions: statistics.evictions)
        let previous = last.withLock { last in
            defer { last = now }
            return last
        } ?? Snapshot()
        func add(_ counter: Counter, _ now: Int, _ before: Int) {
            if now > before { counter.increment(by: now - before) }
        }
        add(hits, now.hits, previous.hits)
        add(misses, now.misses, previous.misses)
        add(sets, now.sets, previous.sets)
        add(droppedReads, now.droppedReads, previous.droppedReads)
        for (reason, counter) in evictions {
            add(counter, now.evictions[reason] ?? 0, previous.evictions[reason] ?? 0)
        }
        entries.record(statistics.count)
        cost.record(statistics.totalCost)
    }
}
#endif
