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

    @Test func aBadIntervalIsRejected() {
        #expect(throws: KVCacheError.invalidArgument("metricsInterval must be positive")) {
            _ = try DiskCache(directory: TemporaryDirectory().url, configuration: .testing { $0.metricsInterval = .seconds(0) })
        }
    }
}
#endif
