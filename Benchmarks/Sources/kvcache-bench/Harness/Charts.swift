import Foundation

/// The report's three kinds of chart, as SVG strings.
enum Charts {
    struct Series {
        var name: String
        var isFloor: Bool
        /// (value size in bytes, figure)
        var points: [(Int, Double)]
    }

    /// Lines over value size (log scale) with a log y axis and a legend on the
    /// right; `marker` draws a labelled vertical line at one size.
    static func byValueSize(title: String, yLabel: String, series: [Series], format: (Double) -> String,
                            marker: (size: Int, label: String)? = nil) -> String {
        let width = 650.0, height = 330.0
        let left = 70.0, right = 450.0, top = 34.0, bottom = 270.0
        let sizes = Array(Set(series.flatMap { $0.points.map(\.0) })).sorted()
        guard let first = sizes.first, let last = sizes.last else { return "" }
        let x = LogScale(low: Double(first), high: Double(max(last, first * 2)), start: left, end: right)
        let y = LogScale(covering: series.flatMap { $0.points.map(\.1) }, start: bottom, end: top)
        var svg = SVG.open(width: width, height: height, title: title)
        svg += SVG.text(left, 20, title, size: 14, weight: "bold")
        for tick in y.ticks {
            let position = y.position(tick)
            svg += SVG.line(left, position, right, position, stroke: "#e4e4e4")
            svg += SVG.text(left - 6, position + 4, format(tick), anchor: "end", size: 11)
        }
        var lastLabel = -Double.infinity
        for size in sizes {
            let position = x.position(Double(size))
            svg += SVG.line(position, top, position, bottom, stroke: "#efefef")
            // Skip a label that would touch the previous one; the grid line stays.
            if position - lastLabel >= 42 || size == last {
                svg += SVG.text(position, bottom + 16, DiskBenchmark.label(bytes: size), anchor: "middle", size: 11)
                lastLabel = position
            }
        }
        svg += SVG.line(left, bottom, right, bottom, stroke: "#666")
        svg += SVG.line(left, top, left, bottom, stroke: "#666")
        svg += SVG.text((left + right) / 2, bottom + 36, "value size (log scale)", anchor: "middle", size: 11)
        svg += "<text x=\"16\" y=\"\(SVG.f((top + bottom) / 2))\" text-anchor=\"middle\" font-size=\"11\" "
            + "transform=\"rotate(-90 16 \(SVG.f((top + bottom) / 2)))\">\(SVG.escape(yLabel))</text>\n"
        if let marker {
            let position = x.position(Double(marker.size))
            svg += SVG.line(position, top - 4, position, bottom, stroke: "#2a8a2a", width: 2, dash: "5 3")
            svg += SVG.text(position + 4, top + 8, marker.label, size: 11, fill: "#2a8a2a")
        }
        for (index, item) in series.enumerated() {
            let color = StrategyGuide.color(item.name)
            let points = item.points.sorted { $0.0 < $1.0 }.map { (x.position(Double($0.0)), y.position($0.1)) }
            svg += SVG.polyline(points, stroke: color, width: item.isFloor ? 1.5 : 2.2,
                                dash: item.isFloor ? "6 4" : nil)
            for point in points { svg += SVG.circle(point.0, point.1, radius: 2.6, fill: color) }
            let legendY = top + 6 + Double(index) * 20
            svg += SVG.line(right + 14, legendY, right + 36, legendY, stroke: color, width: 2.5,
                            dash: item.isFloor ? "6 4" : nil)
            svg += SVG.text(right + 41, legendY + 4, item.name + (item.isFloor ? " (floor)" : ""), size: 11)
        }
        return svg + SVG.close
    }

    /// One bar per strategy: median ÷ floor median on a log axis with 1× marked,
    /// whiskers from the fastest to the slowest run; on the right the ratio, and
    /// apart from it in grey the median itself with its unit.
    static func ratioBars(_ comparison: Comparison) -> String {
        let rows = comparison.rows.filter { $0.ratioToFloor != nil }
        guard !rows.isEmpty, let floor = comparison.rows.first(where: { $0.strategy == comparison.floor }) else {
            return ""
        }
        let base = floor.nanosecondsPerOperation.median
        let isTime = comparison.unit == Comparison.nanoseconds
        let left = 190.0, right = 450.0, rowHeight = 20.0, top = 38.0
        let height = top + rowHeight * Double(rows.count) + 30
        let ratios = rows.flatMap { [$0.nanosecondsPerOperation.min / base, $0.nanosecondsPerOperation.max / base] }
        let x = LogScale(covering: ratios + [1], start: left, end: right)
        let title = "\(comparison.group) · \(comparison.workload)"
        var svg = SVG.open(width: 640, height: height, title: "\(comparison.suite) · " + title)
        svg += SVG.text(8, 16, title, size: 13, weight: "bold")
        svg += SVG.text(left, 32, "× \(comparison.floor ?? "floor") (log), lower is better", size: 10, fill: "#666")
        svg += SVG.text(right + 52, 32, "× floor", anchor: "end", size: 10, fill: "#666")
        svg += SVG.text(right + 64, 32, isTime ? "median per op" : "median", size: 10, fill: "#666")
        let one = x.position(1)
        for (index, row) in rows.enumerated() {
            let y = top + Double(index) * rowHeight
            let summary = row.nanosecondsPerOperation
            let ratio = summary.median / base
            let color = StrategyGuide.color(row.strategy)
            svg += SVG.text(left - 6, y + 13, row.strategy + (row.operationsPerRun != comparison.operationsPerRun
                ? " [\(row.operationsPerRun) ops]" : ""), anchor: "end", size: 11)
            let end = x.position(ratio)
            svg += SVG.rect(min(one, end), y + 3, abs(end - one) < 1 ? 1 : abs(end - one), rowHeight - 7, fill: color)
            svg += SVG.line(x.position(summary.min / base), y + rowHeight / 2, x.position(summary.max / base),
                            y + rowHeight / 2, stroke: "#222")
            let median = isTime ? duration(summary.median)
                : String(format: "%.0f", summary.median) + " " + comparison.unit
            svg += SVG.text(right + 52, y + 13, TargetCheck.format(ratio: ratio), anchor: "end", size: 11,
                            weight: "bold")
            svg += SVG.text(right + 64, y + 13, median, size: 11, fill: "#666")
        }
        let axisY = top + rowHeight * Double(rows.count) + 4
        svg += SVG.line(left, axisY, right, axisY, stroke: "#666")
        for tick in x.ticks {
            svg += SVG.line(x.position(tick), axisY, x.position(tick), axisY + 4, stroke: "#666")
            svg += SVG.text(x.position(tick), axisY + 16, ratioLabel(tick), anchor: "middle", size: 10)
        }
        svg += SVG.line(one, top - 2, one, axisY, stroke: "#444", dash: "3 2")
        return svg + SVG.close
    }

    /// p50, p99 and p999 of single operations per strategy on a log axis.
    static func latencyRanges(_ comparison: Comparison) -> String {
        let rows = comparison.rows.filter { $0.latency != nil }
        guard !rows.isEmpty else { return "" }
        let left = 190.0, right = 470.0, rowHeight = 20.0, top = 26.0
        let height = top + rowHeight * Double(rows.count) + 46
        let x = LogScale(covering: rows.flatMap { [max($0.latency!.p50, 1), $0.latency!.p999] },
                         start: left, end: right)
        let title = "\(comparison.group) · \(comparison.workload): single-operation latency"
        var svg = SVG.open(width: 640, height: height, title: "\(comparison.suite) · " + title)
        svg += SVG.text(8, 16, title, size: 13, weight: "bold")
        for (index, row) in rows.enumerated() {
            let latency = row.latency!
            let y = top + Double(index) * rowHeight + rowHeight / 2
            let color = StrategyGuide.color(row.strategy)
            svg += SVG.text(left - 6, y + 4, row.strategy, anchor: "end", size: 11)
            svg += SVG.line(x.position(max(latency.p50, 1)), y, x.position(latency.p999), y, stroke: color, width: 2)
            svg += SVG.circle(x.position(max(latency.p50, 1)), y, radius: 4.5, fill: color)
            svg += SVG.circle(x.position(latency.p99), y, radius: 4, fill: "#fff", stroke: color)
            svg += SVG.rect(x.position(latency.p999) - 4, y - 4, 8, 8, fill: "#fff", stroke: color)
            svg += SVG.text(right + 6, y + 4, [latency.p50, latency.p99, latency.p999].map(duration)
                .joined(separator: " / "), size: 10)
        }
        let axisY = top + rowHeight * Double(rows.count) + 4
        svg += SVG.line(left, axisY, right, axisY, stroke: "#666")
        for tick in x.ticks {
            svg += SVG.line(x.position(tick), axisY, x.position(tick), axisY + 4, stroke: "#666")
            svg += SVG.text(x.position(tick), axisY + 16, duration(tick), anchor: "middle", size: 10)
        }
        let legendY = axisY + 32
        svg += SVG.circle(left, legendY - 4, radius: 4.5, fill: "#555")
        svg += SVG.text(left + 8, legendY, "p50", size: 10)
        svg += SVG.circle(left + 50, legendY - 4, radius: 4, fill: "#fff", stroke: "#555")
        svg += SVG.text(left + 58, legendY, "p99", size: 10)
        svg += SVG.rect(left + 96, legendY - 8, 8, 8, fill: "#fff", stroke: "#555")
        svg += SVG.text(left + 108, legendY, "p999   (right: p50 / p99 / p999)", size: 10)
        return svg + SVG.close
    }

    /// One bar per strategy for a table of ratios with no floor (the paired 2 ÷ 1
    /// thread scaling): the median on a linear axis from 0, whiskers from the smallest
    /// to the largest round, and a dashed line at `mark` (the bound).
    static func valueBars(_ comparison: Comparison, mark: Double) -> String {
        let rows = comparison.rows
        guard !rows.isEmpty, comparison.floor == nil else { return "" }
        let left = 190.0, right = 450.0, rowHeight = 20.0, top = 38.0
        let height = top + rowHeight * Double(rows.count) + 30
        let largest = max(mark, rows.map(\.nanosecondsPerOperation.max).max() ?? mark) * 1.05
        func x(_ value: Double) -> Double { left + (right - left) * value / largest }
        let title = "\(comparison.group) · \(comparison.workload)"
        var svg = SVG.open(width: 640, height: height, title: "\(comparison.suite) · " + title)
        svg += SVG.text(8, 16, title, size: 13, weight: "bold")
        svg += SVG.text(left, 32, "median \(comparison.unit), whiskers from the smallest round to the largest; "
                        + "higher is better", size: 10, fill: "#666")
        for (index, row) in rows.enumerated() {
            let y = top + Double(index) * rowHeight
            let summary = row.nanosecondsPerOperation
            svg += SVG.text(left - 6, y + 13, row.strategy, anchor: "end", size: 11)
            svg += SVG.rect(left, y + 3, max(1, x(summary.median) - left), rowHeight - 7,
                            fill: StrategyGuide.color(row.strategy))
            svg += SVG.line(x(summary.min), y + rowHeight / 2, x(summary.max), y + rowHeight / 2, stroke: "#222")
            svg += SVG.text(right + 52, y + 13, TargetCheck.format(ratio: summary.median), anchor: "end", size: 11,
                            weight: "bold")
        }
        let axisY = top + rowHeight * Double(rows.count) + 4
        svg += SVG.line(left, axisY, right, axisY, stroke: "#666")
        for tick in stride(from: 0.0, through: largest, by: largest > 4 ? 1 : 0.5) {
            svg += SVG.line(x(tick), axisY, x(tick), axisY + 4, stroke: "#666")
            svg += SVG.text(x(tick), axisY + 16, ratioLabel(tick), anchor: "middle", size: 10)
        }
        svg += SVG.line(x(mark), top - 2, x(mark), axisY, stroke: "#444", dash: "3 2")
        return svg + SVG.close
    }

    static func ratioLabel(_ value: Double) -> String {
        value >= 1 ? String(format: "%g×", value) : String(format: "%g×", (value * 100).rounded() / 100)
    }

    /// "850 ns", "12 µs", "3.4 ms".
    static func duration(_ nanoseconds: Double) -> String {
        func short(_ value: Double) -> String {
            value >= 10 ? String(format: "%.0f", value) : String(format: "%.2g", value)
        }
        if nanoseconds >= 1_000_000_000 { return short(nanoseconds / 1e9) + " s" }
        if nanoseconds >= 1_000_000 { return short(nanoseconds / 1e6) + " ms" }
        if nanoseconds >= 1_000 { return short(nanoseconds / 1e3) + " µs" }
        return short(nanoseconds) + " ns"
    }
}
