#if Metrics
import Metrics

/// Package trait `Metrics`: exports one disk cache's statistics to swift-metrics, as
/// the increase of each counter since the last report, the current totals as gauges,
/// and each group commit's duration as a timer. Every metric has the dimension
/// `cache` = `DiskCache.Configuration.metricsLabel`. Reports come from the statistics
/// (periodically and on `reportMetrics()`), so reads and writes pay nothing for them.
final class DiskMetrics: Sendable {
    private let hits: Counter
    private let misses: Counter
    private let sets: Counter
    private let commits: Counter
    private let failedCommits: Counter
    private let evictions: [EvictionReason: Counter]
    private let entries: Gauge
    private let bytes: Gauge
    private let fileBytes: Gauge
    /// Each group commit's duration on the commit connection.
    let commitDuration: Metrics.Timer
    private let last = MutexBox<DiskCache.Statistics?>(nil)

    init(label: String, factory: any MetricsFactory) {
        let cache = [("cache", label)]
        hits = Counter(label: "kvcache_disk_hits", dimensions: cache, factory: factory)
        misses = Counter(label: "kvcache_disk_misses", dimensions: cache, factory: factory)
        sets = Counter(label: "kvcache_disk_sets", dimensions: cache, factory: factory)
        commits = Counter(label: "kvcache_disk_commits", dimensions: cache, factory: factory)
        failedCommits = Counter(label: "kvcache_disk_failed_commits", dimensions: cache, factory: factory)
        evictions = Dictionary(uniqueKeysWithValues: EvictionReason.allCases.map { reason in
            (reason, Counter(label: "kvcache_disk_evictions", dimensions: cache + [("reason", reason.rawValue)],
                             factory: factory))
        })
        entries = Gauge(label: "kvcache_disk_entries", dimensions: cache, factory: factory)
        bytes = Gauge(label: "kvcache_disk_bytes", dimensions: cache, factory: factory)
        fileBytes = Gauge(label: "kvcache_disk_file_bytes", dimensions: cache, factory: factory)
        commitDuration = Metrics.Timer(label: "kvcache_disk_commit_duration", dimensions: cache, factory: factory)
    }

    /// Adds what changed since the last report, and records the totals.
    func report(_ statistics: DiskCache.Statistics) {
        let previous = last.withLock { last in
            defer { last = statistics }
            return last
        } ?? DiskCache.Statistics()
        func add(_ counter: Counter, _ now: Int, _ before: Int) {
            if now > before { counter.increment(by: now - before) }
        }
        add(hits, statistics.hits, previous.hits)
        add(misses, statistics.misses, previous.misses)
        add(sets, statistics.sets, previous.sets)
        add(commits, statistics.commits, previous.commits)
        add(failedCommits, statistics.failedCommits, previous.failedCommits)
        for (reason, counter) in evictions {
            add(counter, statistics.evictions[reason] ?? 0, previous.evictions[reason] ?? 0)
        }
        entries.record(statistics.count)
        bytes.record(statistics.size)
        fileBytes.record(statistics.fileSize)
    }
}
#endif
