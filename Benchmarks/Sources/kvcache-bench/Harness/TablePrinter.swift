import Foundation

/// Renders a comparison as an aligned text table: median per operation, the
/// spread (min–max and interquartile range), and the ratio to the floor.
enum TablePrinter {
    static func render(_ comparison: Comparison) -> String {
        let unit = Unit.of(comparison)
        var lines: [String] = []
        let perOp = comparison.operationsPerRun == 1 || comparison.unit != Comparison.nanoseconds ? "" : "/op"
        lines.append("\(comparison.suite) · \(comparison.group) · \(comparison.workload)"
            + "  (\(comparison.operationsPerRun) ops/run, \(comparison.rows.first?.nanosecondsPerOperation.runs ?? 0) runs)")
        let showsThroughput = comparison.unit == Comparison.nanoseconds && comparison.operationsPerRun > 1
        let showsLatency = comparison.rows.contains { $0.latency != nil }
        var header = ["strategy", "median \(unit.symbol)\(perOp)", "min", "max", "IQR", "× floor"]
        if showsThroughput { header.append("ops/s") }
        if showsLatency { header += ["p50", "p99", "p999"] }
        var table: [[String]] = [header]
        for row in comparison.rows {
            let s = row.nanosecondsPerOperation
            var name = row.strategy + (row.isFloor ? " (floor)" : "")
            if row.operationsPerRun != comparison.operationsPerRun { name += " [\(row.operationsPerRun) ops]" }
            var cells = [
                name,
                unit.format(s.median), unit.format(s.min), unit.format(s.max),
                unit.format(s.q3 - s.q1),
                row.ratioToFloor.map { String(format: "%.2f", $0) } ?? "–",
            ]
            if showsThroughput { cells.append(Self.rate(perSecond: 1e9 / max(s.median, 1e-3))) }
            if showsLatency {
                cells += row.latency.map { [unit.format($0.p50), unit.format($0.p99), unit.format($0.p999)] }
                    ?? ["–", "–", "–"]
            }
            table.append(cells)
        }
        lines.append(ConsoleTable.render(header: header, rows: Array(table.dropFirst())))
        if let floor = comparison.floor { lines.append("  floor: \(floor)") }
        if showsLatency, let sample = comparison.rows.compactMap(\.latency).first {
            lines.append("  p50/p99/p999: single operations in \(unit.symbol), " + (comparison.suite == "memory"
                ? "1 in \(LatencySampler.interval) timed, clock cost subtracted (\(sample.samples) samples)"
                : "every one timed (\(sample.samples) samples)"))
        }
        for note in comparison.notes { lines.append("  note: \(note)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Operations per second with a k/M suffix, e.g. "12.3 k".
    static func rate(perSecond rate: Double) -> String {
        if rate >= 10_000_000 { return String(format: "%.0f M", rate / 1e6) }
        if rate >= 1_000_000 { return String(format: "%.1f M", rate / 1e6) }
        if rate >= 10_000 { return String(format: "%.0f k", rate / 1e3) }
        if rate >= 1_000 { return String(format: "%.1f k", rate / 1e3) }
        return String(format: "%.0f", rate)
    }

    /// One unit for the whole table so the columns compare at a glance.
    struct Unit {
        var symbol: String
        var divisor: Double

        /// Time figures are scaled to ns, µs or ms; other units print as they are.
        static func of(_ comparison: Comparison) -> Unit {
            guard comparison.unit == Comparison.nanoseconds else { return Unit(symbol: comparison.unit, divisor: 1) }
            return choose(for: comparison.rows.map(\.nanosecondsPerOperation.median))
        }

        static func choose(for medians: [Double]) -> Unit {
            let smallest = medians.min() ?? 0
            if smallest >= 10_000_000 { return Unit(symbol: "ms", divisor: 1_000_000) }
            if smallest >= 10_000 { return Unit(symbol: "µs", divisor: 1_000) }
            return Unit(symbol: "ns", divisor: 1)
        }

        func format(_ nanoseconds: Double) -> String {
            let value = nanoseconds / divisor
            if value >= 1000 { return String(format: "%.0f", value) }
            if value >= 100 { return String(format: "%.1f", value) }
            return String(format: "%.2f", value)
        }
    }
}
