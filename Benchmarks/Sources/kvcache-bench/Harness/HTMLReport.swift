import Foundation

/// One self-contained HTML page (inline SVG, no scripts, no network). It opens
/// with one screen of summary (every target, its figure, met or not), then a
/// table of contents, the strategies with their colours, how to read the
/// figures, every ratio at a glance, and the charts: throughput by value size,
/// the inline-threshold curves, and per workload the ratio to the floor beside
/// the latency percentiles.
enum HTMLReport {
    static func render(_ report: Report) -> String {
        let comparisons = report.comparisons
        let charted = comparisons.filter { $0.suite != "threshold" }
        var sections: [(id: String, title: String, html: String)] = []
        sections.append(("strategies", "Strategies and colours", strategiesSection(comparisons)))
        sections.append(("reading", "How to read the figures", readingSection()))
        sections.append(("glance", "Every ratio at a glance", glanceSection(charted)))
        let throughput = throughputSection(comparisons)
        if !throughput.isEmpty { sections.append(("throughput", "Disk: throughput by value size", throughput)) }
        let threshold = thresholdSection(report)
        if !threshold.isEmpty { sections.append(("threshold", "Inline threshold: inline against file", threshold)) }
        for suite in suites(of: charted) {
            sections.append(("suite-" + suite, suiteTitle(suite),
                             suiteSection(charted.filter { $0.suite == suite })))
        }
        if !report.hitRatios.isEmpty {
            sections.append(("hitratio", "Hit ratio on the shared traces", HitRatioReport.section(report.hitRatios)))
        }
        sections.append(("system", "System and run notes", systemSection(report)))

        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>kvcache-bench report</title>
            <style>\(css)</style></head><body>
            <h1>kvcache-bench report</h1>
            <p class="meta">\(SVG.escape(systemLine(report.system)))</p>

            """
        if report.quick {
            html += "<p class=\"warning\">Smoke run (<code>--quick</code>): tiny batches, figures are not meaningful; "
                + "the summary shows only that every check runs.</p>\n"
        }
        html += summarySection(report.targets)
        html += "<nav id=\"contents\"><h2>Contents</h2><ol>\n"
        html += "<li><a href=\"#summary\">Summary: the targets</a></li>\n"
        for section in sections {
            html += "<li><a href=\"#\(section.id)\">\(SVG.escape(section.title))</a></li>\n"
        }
        html += "</ol></nav>\n"
        for section in sections {
            html += "<section id=\"\(section.id)\"><h2>\(SVG.escape(section.title)) "
                + "<a class=\"top\" href=\"#summary\">↑ summary</a></h2>\n" + section.html + "</section>\n"
        }
        return html + "</body></html>\n"
    }

    private static let css = """
        body { font: 14px/1.45 system-ui, "DejaVu Sans", sans-serif; margin: 1.2em auto; max-width: 1340px;
               color: #222; padding: 0 1em; }
        h1 { font-size: 22px; margin: 0 0 0.2em; } h2 { font-size: 18px; margin: 1.6em 0 0.5em;
             border-bottom: 1px solid #ddd; } h3 { font-size: 15px; margin: 1.2em 0 0.4em; }
        a.top { font-size: 12px; font-weight: normal; margin-left: 1em; color: #777; }
        p.meta { color: #555; margin: 0 0 0.6em; font-size: 13px; }
        p.warning { background: #fff4d6; border: 1px solid #e0c060; padding: 0.4em 0.7em; }
        pre { background: #f5f5f5; padding: 0.8em; overflow-x: auto; }
        table { border-collapse: collapse; } th, td { padding: 2px 8px; text-align: left; vertical-align: top; }
        th { border-bottom: 1px solid #999; font-size: 12px; color: #444; }
        table.targets { width: 100%; font-size: 13px; } table.targets td { border-bottom: 1px solid #eee; }
        td.ratio, td.time { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
        td.ratio { font-weight: bold; } td.time { font-weight: bold; color: #1d4f91; }
        td.bound { white-space: nowrap; color: #444; } td.detail { color: #666; font-size: 12px; }
        td.area, td.target { white-space: nowrap; } td.area { color: #555; }
        .status { white-space: nowrap; display: inline-block; min-width: 6.5em; text-align: center; border-radius: 3px;
                  font-size: 12px; font-weight: bold; padding: 0 4px; }
        .met { background: #d8f0d8; color: #145214; } .notmet { background: #f8d7d4; color: #8a1c12; }
        .notmeasured { background: #eee; color: #666; font-weight: normal; }
        p.count { font-size: 15px; margin: 0.2em 0 0.5em; }
        nav ol { columns: 3; margin: 0; padding-left: 1.4em; } nav h2 { margin-top: 1em; }
        .swatch { display: inline-block; width: 22px; height: 11px; border-radius: 2px; vertical-align: middle; }
        .swatch.floor { background-image: repeating-linear-gradient(90deg, transparent 0 5px, #fff 5px 8px); }
        table.guide td { border-bottom: 1px solid #f0f0f0; font-size: 13px; } td.name { white-space: nowrap; }
        table.glance td { border-bottom: 1px solid #f0f0f0; font-size: 12px; }
        table.glance td.r { text-align: right; font-variant-numeric: tabular-nums; }
        table.glance td:first-child { white-space: nowrap; }
        .grid { display: flex; flex-wrap: wrap; gap: 8px 12px; }
        figure { margin: 0; } figcaption, p.note { color: #555; font-size: 12px; max-width: 1290px; }
        div.workload { margin-bottom: 10px; }
        svg { max-width: 100%; height: auto; }
        """

    // MARK: Summary

    private static func summarySection(_ checks: [TargetCheck]) -> String {
        let met = checks.filter { $0.status == .met }.count
        let missed = checks.filter { $0.status == .notMet }.count
        let absent = checks.count - met - missed
        var html = "<section id=\"summary\"><h2>Summary: the targets</h2>\n"
        html += "<p class=\"count\"><b>\(met) of \(met + missed)</b> targets measured in this run are met"
            + (missed > 0 ? ", <b>\(missed)</b> not met" : "")
            + (absent > 0 ? "; \(absent) not measured in this run" : "")
            + ". Ratios (×) divide two medians of this same run; times are medians with their unit.</p>\n"
        html += "<table class=\"targets\"><tr><th>area</th><th>target</th><th>ratio</th><th>time or value</th>"
            + "<th>bound</th><th>status</th><th>measured (medians, with units)</th></tr>\n"
        for check in checks {
            let statusClass = check.status == .met ? "met" : check.status == .notMet ? "notmet" : "notmeasured"
            html += "<tr><td class=\"area\">\(SVG.escape(check.area))</td><td class=\"target\">\(SVG.escape(check.name))</td>"
                + "<td class=\"ratio\">\(check.ratio.map { TargetCheck.format(ratio: $0) } ?? "")</td>"
                + "<td class=\"time\">\(SVG.escape(check.time ?? check.value ?? ""))</td>"
                + "<td class=\"bound\">\(SVG.escape(check.bound))</td>"
                + "<td><span class=\"status \(statusClass)\">\(check.status.rawValue)</span></td>"
                + "<td class=\"detail\">\(SVG.escape(check.detail))</td></tr>\n"
        }
        return html + "</table></section>\n"
    }

    // MARK: Strategies and reading

    private static func strategiesSection(_ comparisons: [Comparison]) -> String {
        var floors: Set<String> = []
        for row in comparisons.flatMap(\.rows) where row.isFloor { floors.insert(row.strategy) }
        var listed: Set<String> = []
        var html = "<p>Each strategy keeps its colour in every chart. KVCache's rows are blue; floors "
            + "(the cheapest way to do the same operation, measured in the same run) are grey and dashed in the "
            + "line charts.</p>\n<table class=\"guide\">\n"
        for suite in suites(of: comparisons) {
            let names = comparisons.filter { $0.suite == suite }.flatMap(\.rows).map(\.strategy)
            var fresh: [String] = []
            for name in names where !listed.contains(name) && !fresh.contains(name) { fresh.append(name) }
            guard !fresh.isEmpty else { continue }
            listed.formUnion(fresh)
            html += "<tr><th colspan=\"3\">\(SVG.escape(suiteTitle(suite)))</th></tr>\n"
            for name in fresh {
                let floor = floors.contains(name)
                html += "<tr><td><span class=\"swatch\(floor ? " floor" : "")\" style=\"background-color: "
                    + "\(StrategyGuide.color(name))\"></span></td><td class=\"name\"><b>\(SVG.escape(name))</b>"
                    + (floor ? " (floor)" : "") + "</td><td>\(SVG.escape(StrategyGuide.summary(name) ?? ""))</td></tr>\n"
            }
        }
        return html + "</table>\n"
    }

    private static func readingSection() -> String {
        """
        <ul>
        <li><b>Ratio (×)</b>: a strategy's median time per operation divided by the floor's median from the
        same run (the faster floor of the table). 2× is twice the floor's time, below 1× is faster than it.
        Bars start at 1× on a log axis; whiskers span the fastest to the slowest run. The median time per
        operation is printed beside the ratio, in grey, with its unit.</li>
        <li><b>Throughput</b> (ops/s) is one over the median time per operation.</li>
        <li><b>Latency percentiles</b> (p50 dot, p99 ring, p999 square, log axis) come from single operations
        pooled over all runs: every disk operation is timed, one memory operation in
        \(LatencySampler.interval).</li>
        <li><b>Why a set's p50 is tiny and its p99 large.</b> KVCache commits writes in groups: most sets only
        append to a write buffer in memory (well under a microsecond), and the set that fills the buffer, or the
        flush that ends the batch, pays for committing the whole group (the SQLite transaction, and for file
        values the files). So p50 is the buffered append, p99 and p999 are the commits, and the median per batch
        (the bar) counts both. The raw sqlite3 floor does the same with its 1,000 inserts per transaction:
        one set in a thousand pays the COMMIT.</li>
        <li>The disk floors and stores use WAL with synchronous=NORMAL and nothing fsyncs; every set batch ends
        with the store's flush (KVCache: <code>flush(durability: .committed)</code>).</li>
        </ul>

        """
    }

    /// Each suite's ratios as one table: workloads down, strategies across.
    private static func glanceSection(_ comparisons: [Comparison]) -> String {
        var html = "<p>Median ÷ floor median for every table of the run (lower is better; – : not run).</p>\n"
        for suite in suites(of: comparisons) {
            // Tables of ratios without a floor (the paired scaling) are charted on their own.
            let members = comparisons.filter { $0.suite == suite && $0.floor != nil }
            var strategies: [String] = []
            for row in members.flatMap(\.rows) where !strategies.contains(row.strategy) {
                strategies.append(row.strategy)
            }
            html += "<h3>\(SVG.escape(suiteTitle(suite)))</h3>\n<table class=\"glance\"><tr><th>workload</th>"
            for name in strategies {
                html += "<th><span class=\"swatch\" style=\"background-color: \(StrategyGuide.color(name))\">"
                    + "</span> \(SVG.escape(name))</th>"
            }
            html += "</tr>\n"
            for comparison in members {
                html += "<tr><td>\(SVG.escape(comparison.group + " · " + comparison.workload))</td>"
                for name in strategies {
                    let ratio = comparison.rows.first { $0.strategy == name }?.ratioToFloor
                    html += "<td class=\"r\">\(ratio.map { TargetCheck.format(ratio: $0) } ?? "–")</td>"
                }
                html += "</tr>\n"
            }
            html += "</table>\n"
        }
        return html
    }

    // MARK: Charts

    /// Operations per second by value size, one chart per disk workload.
    private static func throughputSection(_ comparisons: [Comparison]) -> String {
        let disk = comparisons.filter { $0.suite == "disk" && $0.valueSize != nil }
        guard !disk.isEmpty else { return "" }
        var html = "<div class=\"grid\">\n"
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
        var html = ""
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

    /// Per workload: the ratio chart beside the latency chart, the notes under both.
    private static func suiteSection(_ comparisons: [Comparison]) -> String {
        var html = ""
        for comparison in comparisons {
            let ratio = comparison.floor == nil && comparison.unit == "×"
                ? Charts.valueBars(comparison, mark: comparison.group == PairedScaling.group
                                        || comparison.group == PairedScaling.quietGroup ? 1.8 : 1)
                : Charts.ratioBars(comparison)
            let latency = comparison.rows.contains { $0.latency != nil } ? Charts.latencyRanges(comparison) : ""
            guard !ratio.isEmpty || !latency.isEmpty else { continue }
            html += "<div class=\"workload\"><div class=\"grid\"><figure>\(ratio)</figure>"
            if !latency.isEmpty { html += "<figure>\(latency)</figure>" }
            html += "</div>"
            var notes = comparison.notes
            if comparison.workload == "set", comparison.rows.contains(where: { $0.strategy.hasPrefix("KVCache") }) {
                notes.append("KVCache's sets return once buffered (p50); the group commit shows in p99 and in "
                    + "the median, which includes the flush that ends the batch (see How to read the figures)")
            }
            if let sample = comparison.rows.compactMap(\.latency).first {
                notes.append("latency: \(sample.samples) single operations per strategy"
                    + (comparison.suite == "memory" ? " (1 in \(LatencySampler.interval) timed)" : ""))
            }
            if !notes.isEmpty {
                html += "<figcaption>" + notes.map(SVG.escape).joined(separator: "<br>") + "</figcaption>"
            }
            html += "</div>\n"
        }
        return html
    }

    private static func systemSection(_ report: Report) -> String {
        var html = "<pre>\(SVG.escape(report.system.description))</pre>\n"
        for note in report.notes { html += "<p class=\"note\">\(SVG.escape(note))</p>\n" }
        return html
    }

    // MARK: Helpers

    private static func systemLine(_ system: SystemInfo) -> String {
        "\(system.date) · \(system.cores) cores, \(system.cpuModel) · \(system.kernel) · SQLite "
            + "\(system.sqliteVersion) · \(system.fileSystemLabel) (\(system.directory))"
    }

    private static func suites(of comparisons: [Comparison]) -> [String] {
        var suites: [String] = []
        for comparison in comparisons where !suites.contains(comparison.suite) { suites.append(comparison.suite) }
        return suites
    }

    static func suiteTitle(_ suite: String) -> String {
        switch suite {
        case "memory": return "Memory level"
        case "disk": return "Disk level by value size"
        case "disk-trim": return "Disk: trim"
        case "disk-open": return "Disk: open time"
        case "cache": return "Two-level facade"
        case "concurrency": return "Concurrency: reads on 1, 2 and 4 threads"
        case "concurrency-latency": return "Concurrency: single reads beside slow work"
        case "threshold": return "Inline threshold"
        case "remote": return "Remote level (Redis) against raw hiredis"
        case "remote-down": return "Remote level: local reads while Redis is down"
        default: return suite
        }
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
