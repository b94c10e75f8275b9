import Foundation

/// A self-contained HTML page: the system header, then one SVG bar chart per
/// comparison (median per operation, min–max whisker, ratio to the floor).
enum HTMLReport {
    static func render(system: SystemInfo, comparisons: [Comparison], quick: Bool) -> String {
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>kvcache-bench</title>
            <style>
            body { font: 14px system-ui, sans-serif; margin: 2em; color: #222; }
            h2 { font-size: 16px; margin: 1.6em 0 0.3em; }
            pre { background: #f5f5f5; padding: 0.8em; }
            p.note { color: #555; margin: 0.2em 0; }
            svg text { font: 12px system-ui, sans-serif; }
            </style></head><body>
            <h1>kvcache-bench\(quick ? " (smoke run: figures are not meaningful)" : "")</h1>
            <pre>\(escape(system.description))</pre>
            <p>Bars: median time per operation over repeated runs; whiskers: min–max; label: ratio to the
            floor (hatched) measured in the same run. KVCache rows in blue.</p>

            """
        for (index, comparison) in comparisons.enumerated() {
            html += "<h2>\(escape("\(comparison.suite) · \(comparison.group) · \(comparison.workload)"))</h2>\n"
            html += chart(comparison, id: "floor\(index)")
            for note in comparison.notes { html += "<p class=\"note\">\(escape(note))</p>\n" }
        }
        return html + "</body></html>\n"
    }

    /// `id` names the chart's hatch pattern, unique in the page.
    private static func chart(_ comparison: Comparison, id: String) -> String {
        let labelWidth = 260.0, barWidth = 420.0, rowHeight = 22.0, right = 150.0
        let unit = TablePrinter.Unit.of(comparison)
        let scaleMax = comparison.rows.map(\.nanosecondsPerOperation.max).max() ?? 1
        let height = rowHeight * Double(comparison.rows.count) + 24
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(labelWidth + barWidth + right))" \
            height="\(Int(height))">
            <defs><pattern id="\(id)" width="6" height="6" patternUnits="userSpaceOnUse" \
            patternTransform="rotate(45)"><rect width="6" height="6" fill="#9a9a9a"/>\
            <line x1="0" y1="0" x2="0" y2="6" stroke="#ddd" stroke-width="3"/></pattern></defs>

            """
        func x(_ nanoseconds: Double) -> String {
            String(format: "%.1f", labelWidth + barWidth * nanoseconds / max(scaleMax, 1))
        }
        for (index, row) in comparison.rows.enumerated() {
            let y = Double(index) * rowHeight + 4
            let summary = row.nanosecondsPerOperation
            let fill = row.isFloor ? "url(#\(id))" : row.strategy.hasPrefix("KVCache") ? "#2f6fd0" : "#d08a2f"
            let ratio = row.ratioToFloor.map { String(format: "×%.2f", $0) } ?? ""
            let value = unit.format(summary.median) + " " + unit.symbol
            svg += """
                <text x="\(labelWidth - 8)" y="\(y + 14)" text-anchor="end">\(escape(row.strategy))</text>
                <rect x="\(labelWidth)" y="\(y + 3)" width="\(String(format: "%.1f", max(1, barWidth * summary.median / max(scaleMax, 1))))" \
                height="\(rowHeight - 8)" fill="\(fill)"/>
                <line x1="\(x(summary.min))" y1="\(y + 10)" x2="\(x(summary.max))" y2="\(y + 10)" \
                stroke="#222" stroke-width="1"/>
                <text x="\(labelWidth + barWidth + 8)" y="\(y + 14)">\(escape(value))  \(ratio)</text>

                """
        }
        let axisY = Double(comparison.rows.count) * rowHeight + 8
        svg += """
            <line x1="\(labelWidth)" y1="\(axisY)" x2="\(labelWidth + barWidth)" y2="\(axisY)" stroke="#999"/>
            <text x="\(labelWidth)" y="\(axisY + 14)">0</text>
            <text x="\(labelWidth + barWidth)" y="\(axisY + 14)" text-anchor="end">\
            \(unit.format(scaleMax)) \(unit.symbol)</text>
            </svg>

            """
        return svg
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;")
            .replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
