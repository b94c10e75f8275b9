import Foundation

/// Time to open an existing store and serve its first read, by store size.
/// Stores are filled once (in bulk where the strategy allows), then closed
/// and reopened once per run. The OS page cache is warm.
struct OpenTimeBenchmark {
    var sizes: [Int]
    var runs: Int
    var workspace: Workspace
    var valueSize = 100

    func run(into report: Report) throws {
        let value = Data(repeating: 0x5A, count: valueSize)
        for size in sizes {
            var samples = SampleSet()
            var directories: [(DiskStrategyKind, URL)] = []
            defer { for (_, directory) in directories { workspace.remove(directory) } }
            for kind in DiskBenchmark.selectedStrategies where kind.inOpenTime {
                Progress.log("disk open: filling \(kind.name) with \(size) entries")
                let directory = try workspace.makeDirectory("open-\(kind.name.filter(\.isLetter))")
                directories.append((kind, directory))
                if let populate = kind.populate {
                    try populate(directory, size, value)
                } else {
                    let store = try kind.open(directory)
                    for index in 0..<size { try store.setValue(value, forKey: DiskKeys.key(index)) }
                    try store.flush()
                    store.close()
                }
            }
            let probe = DiskKeys.key(size / 2)
            for run in 0..<runs {
                Progress.log("disk open: \(size) entries, run \(run + 1)/\(runs)")
                for (kind, directory) in directories {
                    var found = false
                    var opened: (any DiskStrategy)?
                    // Closing is not timed: it may checkpoint or commit buffered access times.
                    let time = try Clock.measure {
                        let store = try kind.open(directory)
                        found = try store.value(forKey: probe) != nil
                        opened = store
                    }
                    opened?.close()
                    if !found { Progress.log("warning: \(kind.name) lost \(probe) after reopening") }
                    samples.record(kind.name, isFloor: kind.isFloor, nanoseconds: time, operations: 1)
                }
            }
            var comparison = Comparison(suite: "disk-open", group: "\(size) entries",
                                        workload: "open + first get", operationsPerRun: 1)
            samples.fill(&comparison)
            comparison.notes.append("not listed: file-per-key stores (they open nothing) and KVCache file "
                + "(same manifest as mixed, plus a file per entry)")
            report.add(comparison)
        }
    }
}
