import Foundation
import Testing
@testable import kvcache_bench

@Suite struct HTMLReportTests {
    @Test func theReportOpensWithTheSummaryAndAContentsList() throws {
        let report = Report.madeUp(quick: false)
        var comparison = Comparison(suite: "disk", group: "1 KB", workload: "get-hit", operationsPerRun: 10)
        comparison.valueSize = 1_024
        comparison.add("raw sqlite3", isFloor: true, samples: [1_000], latencies: [900, 1_000, 1_100])
        comparison.add("KVCache mixed", isFloor: false, samples: [1_100], latencies: [800, 1_000, 5_000])
        comparison.add("URLCache (Foundation)", isFloor: false, samples: [900_000], operationsPerRun: 4)
        report.add(comparison, printing: false)
        let html = HTMLReport.render(report)

        let summary = try #require(html.range(of: "<section id=\"summary\">"))
        let contents = try #require(html.range(of: "<nav id=\"contents\">"))
        #expect(summary.lowerBound < contents.lowerBound)
        #expect(html.contains("<span class=\"status met\">met</span>"))
        #expect(html.contains("<td class=\"ratio\">1.10×</td>"))
        #expect(html.contains("42 not measured in this run"))
        for id in ["strategies", "reading", "glance", "throughput", "suite-disk", "system"] {
            #expect(html.contains("<a href=\"#\(id)\">"), "contents link to \(id)")
            #expect(html.contains("<section id=\"\(id)\">"), "section \(id)")
        }
        // Each strategy explained, with its own colour.
        #expect(html.contains(StrategyGuide.color("URLCache (Foundation)")))
        #expect(html.contains("lists its whole directory on every store and"))
        #expect(html.contains("[4 ops]"))
        #expect(html.contains("Why a set's p50 is tiny and its p99 large"))
        #expect(!html.contains("<script"))
    }

    @Test func aSavedRunRendersTheSameReportAgain() throws {
        let system = SystemInfo(date: "2026-01-01T00:00:00Z", cpuModel: "CPU", cores: 2, kernel: "Linux",
                                sqliteVersion: "3.40.1", directory: "/tmp/x", fileSystem: "tmpfs", journal: "unknown",
                                mountDevice: "tmpfs", mountOptions: "rw")
        let report = Report(system: system, quick: true)
        var comparison = Comparison(suite: "cache", group: "memory holds everything", workload: "mix 90 % get",
                                    operationsPerRun: 10)
        comparison.add("levels by hand", isFloor: true, samples: [1_000, 1_100])
        comparison.add("Cache", isFloor: false, samples: [1_050, 1_090])
        report.add(comparison, printing: false)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-bench-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try report.writeJSON(to: path)
        let read = try Report(json: path)
        #expect(read.quick)
        #expect(read.comparisons.count == 1)
        #expect(HTMLReport.render(read) == HTMLReport.render(report))
        #expect(Targets.evaluate(read.comparisons).contains { $0.area == "facade" && $0.status == .met })
    }

    @Test func strategiesInOneChartHaveDistinctColours() {
        let groups: [[String]] = [
            ["raw sqlite3", "raw files", "KVCache mixed", "KVCache inline", "KVCache file", "YY-style (manifest)",
             "file-per-key (MD5)", "python-diskcache", "URLCache (Foundation)"],
            ["raw sqlite3", "raw files", "KVCache mixed", "KVCache mixed 4K pages", "KVCache inline", "KVCache file",
             "YY-style (manifest)", "file-per-key (MD5)", "file-per-key, FileManager sweep"],
            ["raw sqlite3", "raw files", "KVCache inline 4K pages", "KVCache inline 16K pages", "KVCache file"],
            ["Dictionary+mutex", "KVCache MemoryCache", "KVCache MemoryCache (LRU)", "AutoPurging (sort on purge)",
             "NSCache", UnlockedReadsStrategy.name],
            ["levels by hand", "Cache", "Cache (background disk writes)"],
            HitRatioBenchmark.contenders.map(\.name),
        ]
        for group in groups {
            #expect(Set(group.map(StrategyGuide.color)).count == group.count, "\(group)")
            #expect(group.allSatisfy { StrategyGuide.summary($0) != nil })
        }
    }

    @Test func hitRatiosGetTheirSectionAndSurviveTheJSONRoundTrip() throws {
        let report = Report.madeUp(quick: false)
        report.add(hitRatios: [HitRatioRow(trace: "oltp", capacity: 1_000, requests: 914_145, distinctKeys: 186_880,
                                           hits: [(policy: "KVCache MemoryCache (LRU)", isKVCache: true, isDefault: true,
                                                   hits: 300_122),
                                                  (policy: "S3-FIFO", isKVCache: false, isDefault: false,
                                                   hits: 373_341)])])
        let html = HTMLReport.render(report)
        #expect(html.contains("<section id=\"hitratio\">"))
        #expect(html.contains("oltp: gap to the best of each row, in points"))
        #expect(html.contains("32.83<br>"))
        #expect(html.contains("<b>40.84 ★</b>"))
        #expect(html.contains("<td class=\"time\">32.83 %</td>"))

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-bench-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try report.writeJSON(to: path)
        let read = try Report(json: path)
        #expect(read.hitRatios == report.hitRatios)
        #expect(HTMLReport.render(read) == html)
    }
}

