#if Metrics
import Foundation
import Metrics
import MetricsTestKit
import Testing
@testable import KVCache

/// Package trait `Metrics`: a disk cache with a `metricsLabel` exports its statistics
/// (counters as increases since the last report, totals as gauges, commit times).
/// Built and run by `.ci/run` with `--traits Metrics`.
@Suite struct MetricsTraitTests {
    @Test func statisticsAreExportedAsIncreasesAndTotals() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let metrics = TestMetrics()
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.metricsLabel = "profiles"
            $0.metricsFactory = metrics
        })
        defer { try? cache.close() }
        for key in ["a", "b", "c"] { try cache.setValue(bytes(100), forKey: key) }
        try cache.flush()
        _ = try cache.value(forKey: "a")
        _ = try cache.value(forKey: "missing")
        try cache.removeValue(forKey: "b")
        try cache.flush()
        cache.reportMetrics()
        cache.reportMetrics()  // nothing new: no counter moves
        let dimensions = [("cache", "profiles")]
        #expect(try metrics.expectCounter("kvcache_disk_hits", dimensions).totalValue == 1)
        #expect(try metrics.expectCounter("kvcache_disk_misses", dimensions).totalValue == 1)
        #expect(try metrics.expectCounter("kvcache_disk_sets", dimensions).totalValue == 3)
        #expect(try metrics.expectCounter("kvcache_disk_evictions", dimensions + [("reason", "removed")]).totalValue == 1)
        #expect(try metrics.expectGauge("kvcache_disk_entries", dimensions).lastValue == 2)
        #expect(try metrics.expectGauge("kvcache_disk_bytes", dimensions).lastValue == 200)
        #expect(try !metrics.expectTimer("kvcache_disk_commit_duration", dimensions).values.isEmpty)
        #expect(try metrics.expectCounter("kvcache_disk_commits", dimensions).totalValue >= 2)
    }

    /// Per level: a `Cache` adds its memory level's counters and totals and its loads
    /// to the disk level's metrics, under the same label.
    @Test func aCacheExportsItsMemoryLevelAndLoads() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let metrics = TestMetrics()
        var configuration = Cache<Data>.Configuration(memory: .init(countLimit: 2, autoTrimInterval: nil, policy: .lru))
        configuration.disk.metricsLabel = "pages"
        configuration.disk.metricsFactory = metrics
        let cache = try Cache<Data>(name: "pages", baseDirectory: dir.url, configuration: configuration)
        defer { try? cache.close() }
        for key in ["a", "b", "c"] { try await cache.setValue(bytes(10), forKey: key) }  // "a" evicted by count
        _ = try await cache.value(forKey: "c")        // memory hit
        _ = try await cache.value(forKey: "a")        // disk hit, promoted
        _ = try await cache.value(forKey: "missing")  // miss in both
        _ = try await cache.value(forKey: "computed") { bytes(5) }
        cache.reportMetrics()
        cache.reportMetrics()  // nothing new: no counter moves
        let dimensions = [("cache", "pages")]
        #expect(try metrics.expectCounter("kvcache_memory_hits", dimensions).totalValue == 1)
        #expect(try metrics.expectCounter("kvcache_memory_sets", dimensions).totalValue == 5)
        #expect(try metrics.expectCounter("kvcache_memory_evictions", dimensions + [("reason", "count")]).totalValue == 3)
        #expect(try metrics.expectGauge("kvcache_memory_entries", dimensions).lastValue == 2)
        #expect(try metrics.expectGauge("kvcache_memory_cost", dimensions).lastValue == 15)
        #expect(try metrics.expectCounter("kvcache_cache_disk_hits", dimensions).totalValue == 1)
        #expect(try metrics.expectCounter("kvcache_cache_misses", dimensions).totalValue == 2)
        #expect(try metrics.expectCounter("kvcache_cache_computations", dimensions).totalValue == 1)
        #expect(try metrics.expectCounter("kvcache_disk_sets", dimensions).totalValue == 4)
    }

    /// A memory cache on its own exports its statistics too, with a `metricsLabel` of its own.
    @Test func aMemoryCacheExportsItsStatistics() throws {
        let metrics = TestMetrics()
        var configuration = MemoryCache<String, Int>.Configuration(countLimit: 2, autoTrimInterval: nil, policy: .lru)
        configuration.metricsLabel = "sessions"
        configuration.metricsFactory = metrics
        let cache = try MemoryCache<String, Int>(configuration: configuration)
        for (index, key) in ["a", "b", "c"].enumerated() { cache.setValue(index, forKey: key, cost: 10) }  // "a" evicted
        _ = cache.value(forKey: "c")
        _ = cache.value(forKey: "a")
        cache.removeValue(forKey: "b")
        cache.reportMetrics()
        cache.reportMetrics()  // nothing new: no counter moves
        let dimensions = [("cache", "sessions")]
        #expect(try metrics.expectCounter("kvcache_memory_hits", dimensions).totalValue == 1)
        #expect(try metrics.expectCounter("kvcache_memory_misses", dimensions).totalValue == 1)
        #expect(try metrics.expectCounter("kvcache_memory_sets", dimensions).totalValue == 3)
        #expect(try metrics.expectCounter("kvcache_memory_evictions", dimensions + [("reason", "count")]).totalValue == 1)
        #expect(try metrics.expectCounter("kvcache_memory_evictions", dimensions + [("reason", "removed")]).totalValue == 1)
        #expect(try metrics.expectGauge("kvcache_memory_entries", dimensions).lastValue == 1)
        #expect(try metrics.expectGauge("kvcache_memory_cost", dimensions).lastValue == 10)
        // Close reports what changed since.
        _ = cache.value(forKey: "c")
        try cache.close()
        #expect(try metrics.expectCounter("kvcache_memory_hits", dimensions).totalValue == 2)
    }

    /// Without a label nothing is exported, and a periodic export runs on its own.
    @Test func aMemoryCacheExportsPeriodically() async throws {
        let metrics = TestMetrics()
        var configuration = MemoryCache<String, Int>.Configuration(autoTrimInterval: nil)
        configuration.metricsLabel = "periodic"
        configuration.metricsFactory = metrics
        configuration.metricsInterval = .milliseconds(10)
        let cache = try MemoryCache<String, Int>(configuration: configuration)
        cache.setValue(1, forKey: "a")
        // The timer fires on its own queue; this task may wait long for a thread beside every
        // other suite (50 s seen on 2 cores), so the bound is generous and checked once more after.
        func exported() -> Bool {
            (try? metrics.expectCounter("kvcache_memory_sets", [("cache", "periodic")]).totalValue) == 1
        }
        let deadline = ContinuousClock.now + .seconds(120)
        while !exported(), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(exported())
        let unlabelled = TestMetrics()
        var plain = MemoryCache<String, Int>.Configuration(autoTrimInterval: nil)
        plain.metricsFactory = unlabelled
        let quiet = try MemoryCache<String, Int>(configuration: plain)
        quiet.setValue(1, forKey: "a")
        quiet.reportMetrics()
        #expect(unlabelled.counters.isEmpty)
        #expect(throws: KVCacheError.invalidArgument("metricsInterval must be positive")) {
            var bad = MemoryCache<String, Int>.Configuration()
            bad.metricsInterval = .zero
            _ = try MemoryCache<String, Int>(configuration: bad)
        }
    }

    @Test func aBadIntervalIsRejected() {
        #expect(throws: KVCacheError.invalidArgument("metricsInterval must be positive")) {
            _ = try DiskCache(directory: TemporaryDirectory().url, configuration: .testing { $0.metricsInterval = .seconds(0) })
        }
    }
}
#endif
