import Foundation
import KVCache

/// `kvcache-bench threshold`: where a value stops being cheaper inside SQLite
/// than in its own file, for set and get, with 4 KiB and 16 KiB (the default)
/// pages, on the directory given with --dir. Recommends `inlineThreshold` for
/// that file system: the size from which file mode costs less than inline.
struct ThresholdSweep {
    static func valueSizes(_ scale: CommonOptions.Scale) -> [Int] {
        let kilobytes: [Int]
        switch scale {
        case .quick: kilobytes = [1, 16, 64, 256]
        case .summary, .standard: kilobytes = [1, 2, 4, 8, 16, 24, 32, 48, 64, 128, 256, 512, 1024]
        case .full: kilobytes = [1, 2, 4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 96, 128, 256, 512, 1024]
        }
        return kilobytes.map { $0 * 1024 }
    }

    static let inlineSmallPages = KVCacheDiskStrategy.kind(.inline, pageSize: 4096)
    static let inlineLargePages = KVCacheDiskStrategy.kind(.inline, pageSize: 16384)
    static let file = KVCacheDiskStrategy.kind(.file)

    static let strategies: [DiskStrategyKind] = [
        RawSQLiteStrategy.kind, RawFileStrategy.kind, inlineSmallPages, inlineLargePages, file,
    ]

    var runs: Int
    var valueSizes: [Int]
    var sizing: DiskBenchmark
    var workspace: Workspace

    func run(into report: Report) throws {
        var medians: [String: [String: [Int: Double]]] = [:]  // workload → strategy → size → ns
        for size in valueSizes {
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
        let recommendation = recommend(sets: medians["set"] ?? [:], gets: medians["get-hit"] ?? [:],
                                       fileSystem: report.system.fileSystemLabel)
        report.thresholdRecommendation = recommendation
        Output.print(recommendation.lines.joined(separator: "\n") + "\n")
    }

    private func recommend(sets: [String: [Int: Double]], gets: [String: [Int: Double]],
                           fileSystem: String) -> ThresholdRecommendation {
        let file = Self.file.name
        var combined: [String: [Int: Double]] = [:]
        for (strategy, bySize) in sets {
            for (size, set) in bySize { if let get = gets[strategy]?[size] { combined[strategy, default: [:]][size] = set + get } }
        }
        let crossovers = [(Self.inlineSmallPages.name, 4096), (Self.inlineLargePages.name, 16384)].map { name, page in
            ThresholdRecommendation.Crossover(
                inline: name, pageSize: page,
                set: crossover(inline: sets[name] ?? [:], file: sets[file] ?? [:]),
                get: crossover(inline: gets[name] ?? [:], file: gets[file] ?? [:]),
                setPlusGet: crossover(inline: combined[name] ?? [:], file: combined[file] ?? [:]))
        }
        return ThresholdRecommendation(fileSystem: fileSystem, largestSize: valueSizes.last ?? 0,
                                       crossovers: crossovers)
    }

    /// The smallest size from which files win at every larger size too.
    private func crossover(inline: [Int: Double], file: [Int: Double]) -> Int? {
        var from: Int?
        for size in valueSizes.reversed() {
            guard let a = inline[size], let b = file[size], b < a else { break }
            from = size
        }
        return from
    }

    private func render(workload: String, medians: [String: [Int: Double]]) -> String {
        let names = Self.strategies.map(\.name)
        var table = [["size"] + names]
        for size in valueSizes {
            table.append([DiskBenchmark.label(bytes: size)] + names.map { name in
                medians[name]?[size].map { String(format: "%.1f", $0 / 1000) } ?? "–"
            })
        }
        let lines = ["threshold · \(workload) · median µs/op, \(runs) runs, KVCache DiskCache by storage mode",
                     ConsoleTable.render(header: table[0], rows: Array(table.dropFirst()))]
        return lines.joined(separator: "\n") + "\n"
    }
}

/// What the threshold sweep found: per page size, the value size from which
/// file mode beats inline, and the `inlineThreshold` that follows.
struct ThresholdRecommendation: Codable, Sendable {
    struct Crossover: Codable, Sendable {
        var inline: String
        var pageSize: Int
        /// Smallest measured size from which files win (nil: they never do).
        var set: Int?
        var get: Int?
        /// Set plus get-hit, the figure the recommendation uses.
        var setPlusGet: Int?
    }

    var fileSystem: String
    var largestSize: Int
    var crossovers: [Crossover]

    /// For the default page size; nil when files never won.
    var recommendedBytes: Int? {
        let pageSize = DiskCache.Configuration().pageSize
        return (crossovers.first { $0.pageSize == pageSize } ?? crossovers.first)?.setPlusGet
    }

    var lines: [String] {
        func label(_ size: Int?) -> String {
            size.map { "from \(DiskBenchmark.label(bytes: $0))" } ?? "never (up to \(DiskBenchmark.label(bytes: largestSize)))"
        }
        var lines = crossovers.map { c in
            "\(c.inline): files win for set \(label(c.set)), get \(label(c.get)), set+get \(label(c.setPlusGet))"
        }
        if let recommendedBytes {
            lines.append("recommended inlineThreshold on \(fileSystem): \(DiskBenchmark.label(bytes: recommendedBytes)) "
                + "(values this size and up go to files; KVCache's default is 20 KB)")
        } else {
            lines.append("recommended inlineThreshold on \(fileSystem): at least "
                + "\(DiskBenchmark.label(bytes: largestSize)) (files never won; KVCache's default is 20 KB)")
        }
        return lines
    }
}
