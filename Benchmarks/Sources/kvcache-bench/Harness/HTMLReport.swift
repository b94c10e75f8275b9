import Foundation

/// One self-contained HTML page (inline SVG, no scripts, no network): the
/// system header, throughput by value size, the inline-threshold curves,
/// ratio bars against the floor and latency percentiles.
enum HTMLReport {
    static func render(_ report: Report) -> String {
        let comparisons = report.comparisons
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>kvcache-bench</title>
            <style>
            body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1250px; color: #222; padding: 0 1em; }
            h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 2em; border-bottom: 1px solid #ddd; }
            h3 { font-size: 15px; margin: 1.2em 0 0.4em; }
            pre { background: #f5f5f5; padding: 0.8em; overflow-x: auto; }
            .grid { display: flex; flex-wrap: wrap; gap: 8px 20px; }
            figure { margin: 0; } figcaption, p.note { color: #555; font-size: 12px; max-width: 600px; }
            svg { max-width: 100%; height: auto; }
            </style></head><body>
            <h1>kvcache-bench\(report.quick ? " — smoke run (--quick): figures are not meaningful" : "")</h1>
            <pre>\(SVG.escape(report.system.description))</pre>

            """
        for note in report.notes { html += "<p class=\"note\">\(SVG.escape(note))</p>\n" }
        html += """
            <p>Every figure is the median of repeated runs; whiskers span the fastest to the slowest run.
            Ratios divide by the floor (the cheapest way to do the same operation) measured in the same run,
            so 2× means twice the floor's time. Latency percentiles come from single operations: every disk
            operation, one memory operation in \(LatencySampler.interval).</p>

            """
        html += throughputSection(comparisons)
        html += thresholdSection(report)
        html += perComparisonSection(
            title: "Ratio to the floor", comparisons: comparisons.filter { $0.suite != "threshold" },
            chart: Charts.ratioBars)
        html += perComparisonSection(
            title: "Latency percentiles (p50, p99, p999)",
            comparisons: comparisons.filter { $0.suite != "threshold" && $0.rows.contains { $0.latency != nil } },
            chart: Charts.latencyRanges)
        return html + "</body></html>\n"
    }

    /// Operations per second by value size, one chart per disk workload.
    private static func throughputSection(_ comparisons: [Comparison]) -> String {
        let disk = comparisons.filter { $0.suite == "disk" && $0.valueSize != nil }
        guard !disk.isEmpty else { return "" }
        var html = "<h2>Disk: throughput by value size</h2>\n<div class=\"grid\">\n"
        for workload in ["set", "get-hit", "get-miss"] {
            let series = seriesByStrategy(disk.filter { $0.workload == workload }) { 1e9 / $0 }
            guard !series.isEmpty else { continue }
            html += "<figure>" + Charts.byValueSize(
                title: "disk \(workload): operations per second", yLabel: "ops/s (log scale), higher is better",
                series: series, format: { TablePrinter.rate(perSecond: $0) }) + "</figure>\n"
        }
        return html + "</div>\n"
    }

    /// µs per operation, inline against file, with the recommended threshold marked.
    private static func thresholdSection(_ report: Report) -> String {
        let sweep = report.comparisons.filter { $0.suite == "threshold" && $0.valueSize != nil }
        guard !sweep.isEmpty else { return "" }
        var html = "<h2>Inline threshold: inline (SQLite) against file by value size</h2>\n"
        let recommendation = report.thresholdRecommendation
        if let recommendation {
            html += "<pre>" + SVG.escape(recommendation.lines.joined(separator: "\n")) + "</pre>\n"
        }
        let marker = recommendation?.recommendedBytes.map {
            (size: $0, label: "recommended: \(DiskBenchmark.label(bytes: $0))")
        }
        html += "<div class=\"grid\">\n"
        for workload in ["set", "get-hit"] {
            let series = seriesByStrategy(sweep.filter { $0.workload == workload }) { $0 }
            html += "<figure>" + Charts.byValueSize(
                title: "threshold \(workload): time per operation", yLabel: "per operation (log scale), lower is better",
                series: series, format: Charts.duration, marker: marker) + "</figure>\n"
        }
        return html + "</div>\n"
    }

    /// One chart per comparison, grouped by suite.
    private static func perComparisonSection(title: String, comparisons: [Comparison],
                                             chart: (Comparison) -> String) -> String {
        guard !comparisons.isEmpty else { return "" }
        var html = "<h2>\(SVG.escape(title))</h2>\n"
        var suites: [String] = []
        for comparison in comparisons where !suites.contains(comparison.suite) { suites.append(comparison.suite) }
        for suite in suites {
            html += "<h3>\(SVG.escape(suite))</h3>\n<div class=\"grid\">\n"
            for comparison in comparisons where comparison.suite == suite {
                let svg = chart(comparison)
                guard !svg.isEmpty else { continue }
                html += "<figure>" + svg
                let notes = comparison.notes.map(SVG.escape).joined(separator: "<br>")
                html += notes.isEmpty ? "" : "<figcaption>\(notes)</figcaption>"
                html += "</figure>\n"
            }
            html += "</div>\n"
        }
        return html
    }

    /// Each strategy's medians across the comparisons' value sizes, mapped by `transform`.
    private static func seriesByStrategy(_ comparisons: [Comparison],
                                         transform: (Double) -> Double) -> [Charts.Series] {
        var series: [Charts.Series] = []
        for comparison in comparisons.sorted(by: { ($0.valueSize ?? 0) < ($1.valueSize ?? 0) }) {
            guard let size = comparison.valueSize else { continue }
            for row in comparison.rows {
                let point = (size, transform(row.nanosecondsPerOperation.median))
                if let index = series.firstIndex(where: { $0.name == row.strategy }) {
                    series[index].points.append(point)
                } else {
                    series.append(Charts.Series(name: row.strategy, isFloor: row.isFloor, points: [point]))
                }
            }
        }
        return series
    }
}
