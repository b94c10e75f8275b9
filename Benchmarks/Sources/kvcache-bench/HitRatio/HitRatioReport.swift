import Foundation

/// The report's hit-ratio section: per trace, a chart of each policy's gap to the
/// best of its row at every cache size, and the table of the figures.
enum HitRatioReport {
    /// Colour and marker of each cache size in the gap charts.
    private static let sizeStyles: [(color: String, shape: Shape)] = [
        ("#e6550d", .circle), ("#31a354", .square), ("#756bb1", .diamond), ("#222222", .triangle),
    ]

    private enum Shape { case circle, square, diamond, triangle }

    static func section(_ rows: [HitRatioRow]) -> String {
        var html = """
            <p>Each trace replayed through every policy: a cache of N entries, cold at start, that inserts on \
            every miss (count-based, no values). The hit ratio is hits ÷ requests; the gap is a cell's hit ratio \
            minus the best of its row, in points. KVCache's MemoryCache is replayed through its API \
            (<code>value(forKey:)</code>, <code>setValue</code> on a miss, <code>countLimit</code> = N); the \
            others are the reference implementations in <code>Benchmarks/Sources/kvcache-bench/HitRatio</code>. \
            The target: in every row, KVCache within 1.0 point of the best reference policy, and at least 40.0 % \
            on oltp at 1,000 entries. Traces: web07 and web12 from cache2k (Jens Wilke, headissue GmbH, CC BY \
            4.0); oltp from N. Megiddo and D. S. Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache", \
            FAST 2003; gli (glimpse) from the LIRS authors.</p>

            """
        html += "<table class=\"guide\">\n"
        for name in policies(rows) {
            html += "<tr><td><span class=\"swatch\" style=\"background-color: \(StrategyGuide.color(name))\">"
                + "</span></td><td class=\"name\"><b>\(SVG.escape(name))</b></td><td>"
                + SVG.escape(StrategyGuide.summary(name) ?? "") + "</td></tr>\n"
        }
        html += "</table>\n"
        var traces: [String] = []
        for row in rows where !traces.contains(row.trace) { traces.append(row.trace) }
        for trace in traces {
            let members = rows.filter { $0.trace == trace }
            guard let first = members.first else { continue }
            html += "<h3>\(SVG.escape(trace)) (\(first.requests.formatted()) requests, "
                + "\(first.distinctKeys.formatted()) distinct keys)</h3>\n"
            html += "<div class=\"grid\"><figure>" + gapChart(trace: trace, rows: members) + "</figure>"
            html += "<figure>" + table(members) + "</figure></div>\n"
        }
        return html
    }

    /// Policies down, gap to the row's best across (0 at the right), one marker per size.
    static func gapChart(trace: String, rows: [HitRatioRow]) -> String {
        let names = policies(rows)
        let left = 230.0, right = 610.0, rowHeight = 22.0, top = 40.0
        let height = top + rowHeight * Double(names.count) + 58
        let worst = rows.flatMap { $0.cells.map(\.gapToBest) }.min() ?? 0
        let span = max(2, (-worst / 5).rounded(.up) * 5)  // points, a multiple of 5
        func x(_ gap: Double) -> Double { right + (right - left) * max(gap, -span) / span }
        let title = "\(trace): gap to the best of each row, in points"
        var svg = SVG.open(width: 640, height: height, title: "hit ratio · " + title)
        svg += SVG.text(8, 16, title, size: 13, weight: "bold")
        svg += SVG.text(left - 220, 32, "hit ratio − the row's best (0 = best), higher is better; dashed: −1 point, "
            + "the target", size: 10, fill: "#666")
        let axisY = top + rowHeight * Double(names.count) + 4
        let step = span <= 10 ? 1.0 : span <= 25 ? 5 : 10
        for tick in stride(from: 0, through: span, by: step) {
            let position = x(-tick)
            svg += SVG.line(position, top - 4, position, axisY, stroke: "#ececec")
            svg += SVG.text(position, axisY + 16, tick == 0 ? "0" : String(format: "−%g", tick), anchor: "middle",
                            size: 10)
        }
        // The target: within 1 point of the best.
        svg += SVG.line(x(-1), top - 4, x(-1), axisY, stroke: "#2a8a2a", dash: "4 3")
        svg += SVG.line(left, axisY, right, axisY, stroke: "#666")
        for (index, name) in names.enumerated() {
            let y = top + Double(index) * rowHeight + rowHeight / 2
            let color = StrategyGuide.color(name)
            let isKVCache = rows.contains { $0.cells.contains { $0.policy == name && $0.isKVCache } }
            if isKVCache {
                svg += SVG.rect(4, y - rowHeight / 2 + 1, right + 2, rowHeight - 2, fill: "#eef4fb")
            }
            svg += SVG.rect(left - 18, y - 5, 12, 10, fill: color)
            svg += SVG.text(left - 24, y + 4, name, anchor: "end", size: 11, weight: isKVCache ? "bold" : nil)
            svg += SVG.line(left, y, right, y, stroke: "#f4f4f4")
            for (sizeIndex, row) in rows.enumerated() {
                guard let cell = row.cells.first(where: { $0.policy == name }) else { continue }
                let style = sizeStyles[sizeIndex % sizeStyles.count]
                svg += marker(style.shape, x(cell.gapToBest), y, color: style.color)
            }
        }
        var legendX = left - 40
        let legendY = axisY + 36
        for (sizeIndex, row) in rows.enumerated() {
            let style = sizeStyles[sizeIndex % sizeStyles.count]
            svg += marker(style.shape, legendX, legendY - 4, color: style.color)
            let label = "\(row.capacity.formatted()) entries"
            svg += SVG.text(legendX + 8, legendY, label, size: 10)
            legendX += 22 + Double(label.count) * 6
        }
        return svg + SVG.close
    }

    /// Sizes down, policies across: hit ratio %, the gap under it; the best in bold.
    static func table(_ rows: [HitRatioRow]) -> String {
        let names = policies(rows)
        var html = "<table class=\"glance\"><tr><th>entries</th>"
        for name in names {
            html += "<th><span class=\"swatch\" style=\"background-color: \(StrategyGuide.color(name))\"></span> "
                + SVG.escape(name) + "</th>"
        }
        html += "</tr>\n"
        for row in rows {
            html += "<tr><td>\(row.capacity.formatted())</td>"
            for name in names {
                guard let cell = row.cells.first(where: { $0.policy == name }) else {
                    html += "<td class=\"r\">–</td>"
                    continue
                }
                let ratio = String(format: "%.2f", cell.hitRatio)
                html += row.isBest(cell) ? "<td class=\"r\"><b>\(ratio) ★</b></td>"
                    : "<td class=\"r\">\(ratio)<br><span style=\"color: #8a1c12\">"
                        + String(format: "%+.2f", cell.gapToBest) + "</span></td>"
            }
            html += "</tr>\n"
        }
        return html + "</table><p class=\"note\">Hit ratio in %; under it the gap to the row's best in points; "
            + "★ the best.</p>\n"
    }

    private static func policies(_ rows: [HitRatioRow]) -> [String] {
        var names: [String] = []
        for cell in rows.flatMap(\.cells) where !names.contains(cell.policy) { names.append(cell.policy) }
        return names
    }

    private static func marker(_ shape: Shape, _ x: Double, _ y: Double, color: String) -> String {
        switch shape {
        case .circle:
            return SVG.circle(x, y, radius: 4.5, fill: color)
        case .square:
            return SVG.rect(x - 4, y - 4, 8, 8, fill: color)
        case .diamond:
            return "<polygon points=\"\(SVG.f(x)),\(SVG.f(y - 5.5)) \(SVG.f(x + 5.5)),\(SVG.f(y)) "
                + "\(SVG.f(x)),\(SVG.f(y + 5.5)) \(SVG.f(x - 5.5)),\(SVG.f(y))\" fill=\"\(color)\"/>\n"
        case .triangle:
            return "<polygon points=\"\(SVG.f(x)),\(SVG.f(y - 5)) \(SVG.f(x + 5)),\(SVG.f(y + 4)) "
                + "\(SVG.f(x - 5)),\(SVG.f(y + 4))\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.5\"/>\n"
        }
    }
}
