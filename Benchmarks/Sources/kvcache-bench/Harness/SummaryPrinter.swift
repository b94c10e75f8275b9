/// One matrix per suite at the end of a run: each comparison's ratios to its
/// floor, strategies as columns, so a whole run reads at a glance.
enum SummaryPrinter {
    static func render(_ comparisons: [Comparison]) -> String {
        var suites: [String] = []
        for comparison in comparisons where !suites.contains(comparison.suite) { suites.append(comparison.suite) }
        var output: [String] = []
        for suite in suites {
            // Tables without a floor (ratios already, as the paired scaling) have no column to fill.
            let members = comparisons.filter { $0.suite == suite && $0.floor != nil }
            var strategies: [String] = []
            for row in members.flatMap(\.rows) where !strategies.contains(row.strategy) {
                strategies.append(row.strategy)
            }
            var table = [["summary · \(suite) · median / floor"] + strategies]
            for comparison in members {
                let cells = strategies.map { name in
                    comparison.rows.first { $0.strategy == name }?.ratioToFloor
                        .map { String(format: "%.2f", $0) } ?? "–"
                }
                table.append(["\(comparison.group) · \(comparison.workload)"] + cells)
            }
            output.append(ConsoleTable.render(header: table[0], rows: Array(table.dropFirst())) + "\n")
        }
        return output.joined(separator: "\n")
    }
}
