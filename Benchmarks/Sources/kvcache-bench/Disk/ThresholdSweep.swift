import Foundation

/// `kvcache-bench threshold`: where a value stops being cheaper inside SQLite
/// than in its own file, for set and get, with 4 KiB and 16 KiB pages. The
/// result is what `inlineThreshold` (default 20 KB) should sit between.
struct ThresholdSweep {
    static let valueSizes = [2, 4, 8, 12, 16, 20, 24, 32, 48, 64, 96, 128].map { $0 * 1024 }

    static let inlineSmallPages = KVCacheDiskStrategy.kind(.inline, pageSize: 4096)
    static let inlineLargePages = KVCacheDiskStrategy.kind(.inline, pageSize: 16384)
    static let file = KVCacheDiskStrategy.kind(.file)

    static let strategies: [DiskStrategyKind] = [
        RawSQLiteStrategy.kind, RawFileStrategy.kind, inlineSmallPages, inlineLargePages, file,
    ]

    var runs: Int
    var sizing: DiskBenchmark
    var workspace: Workspace

    func run(into report: Report) throws {
        var medians: [String: [String: [Int: Double]]] = [:]  // workload → strategy → size → ns
        for size in Self.valueSizes {
            let run = ValueSizeRun(strategies: Self.strategies, valueSize: size,
                                   operations: sizing.operations(for: size), runs: runs,
                                   workspace: workspace, suite: "threshold")
            for comparison in try run.measure() where comparison.workload != "get-miss" {
                report.add(comparison, printing: false)
                for row in comparison.rows {
                    medians[comparison.workload, default: [:]][row.strategy, default: [:]][size] =
                        row.nanosecondsPerOperation.median
                }
            }
        }
        for workload in ["set", "get-hit"] {
            Output.print(render(workload: workload, medians: medians[workload] ?? [:]))
        }
    }

    private func render(workload: String, medians: [String: [Int: Double]]) -> String {
        let names = Self.strategies.map(\.name)
        var table = [["size"] + names]
        for size in Self.valueSizes {
            table.append([DiskBenchmark.label(bytes: size)] + names.map { name in
                medians[name]?[size].map { String(format: "%.1f", $0 / 1000) } ?? "–"
            })
        }
        let widths = table[0].indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        var lines = ["threshold · \(workload) · median µs/op, \(runs) runs, KVCache DiskCache by storage mode"]
        for (index, row) in table.enumerated() {
            lines.append("  " + row.indices.map { column in
                let pad = String(repeating: " ", count: widths[column] - row[column].count)
                return column == 0 ? row[column] + pad : pad + row[column]
            }.joined(separator: "  "))
            if index == 0 { lines.append("  " + String(repeating: "-", count: widths.reduce(0, +) + 2 * widths.count - 2)) }
        }
        for inline in [Self.inlineSmallPages.name, Self.inlineLargePages.name] {
            lines.append("  \(crossover(inline: medians[inline] ?? [:], file: medians[Self.file.name] ?? [:], name: inline))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The smallest size from which files win at every larger size too.
    private func crossover(inline: [Int: Double], file: [Int: Double], name: String) -> String {
        var from: Int?
        for size in Self.valueSizes.reversed() {
            guard let a = inline[size], let b = file[size], b < a else { break }
            from = size
        }
        guard let from else { return "\(name): files never win up to \(DiskBenchmark.label(bytes: Self.valueSizes.last!))" }
        return "\(name): files win from \(DiskBenchmark.label(bytes: from)) up"
    }
}
