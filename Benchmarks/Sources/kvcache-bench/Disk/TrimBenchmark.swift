import Foundation

/// Trimming 10 % of a store: the manifest strategies delete by an index, the
/// file-per-key strategy must enumerate and stat every file. After each timed
/// trim, as many new entries are added (untimed) so every run trims the same
/// amount from the same store size.
struct TrimBenchmark {
    var entries: Int
    var runs: Int
    var workspace: Workspace
    var valueSize = 1024

    func run(into report: Report) throws {
        let value = Data(repeating: 0xA5, count: valueSize)
        let target = entries - entries / 10
        var samples = SampleSet()
        for kind in DiskBenchmark.selectedStrategies {
            let directory = try workspace.makeDirectory("trim-\(kind.name.filter(\.isLetter))")
            defer { workspace.remove(directory) }
            guard let store = try kind.open(directory) as? any TrimmableDiskStrategy else { continue }
            defer { store.close() }
            Progress.log("disk trim: filling \(kind.name) with \(entries) entries")
            for index in 0..<entries { try store.setValue(value, forKey: DiskKeys.key(index)) }
            try store.flush()
            var next = entries
            for run in 0..<runs {
                Progress.log("disk trim: \(kind.name), run \(run + 1)/\(runs)")
                let time = try Clock.measure { try store.trim(toCount: target) }
                samples.record(kind.name, isFloor: kind.isFloor, nanoseconds: time, operations: 1)
                for _ in 0..<(entries - target) {
                    try store.setValue(value, forKey: DiskKeys.key(next))
                    next += 1
                }
                try store.flush()
            }
        }
        var comparison = Comparison(
            suite: "disk-trim", group: "\(entries) entries of \(DiskBenchmark.label(bytes: valueSize))",
            workload: "trim 10 %", operationsPerRun: 1)
        samples.fill(&comparison)
        comparison.notes.append("time per whole trim; 1 KB values are inline in the manifest strategies")
        report.add(comparison)
    }
}
