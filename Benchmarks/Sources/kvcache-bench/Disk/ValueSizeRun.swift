import Foundation

/// Set, get-hit and get-miss of one value size for several strategies. Each
/// run opens every strategy on an empty directory, in turn, so drift on a
/// shared machine spreads over all of them.
struct ValueSizeRun {
    var strategies: [DiskStrategyKind]
    var valueSize: Int
    var operations: Int
    var runs: Int
    var workspace: Workspace
    /// Prefix for progress lines and the comparisons' suite.
    var suite = "disk"

    /// The set, get-hit and get-miss comparisons, in that order.
    func measure() throws -> [Comparison] {
        let group = DiskBenchmark.label(bytes: valueSize)
        var random = SplitMix64(seed: UInt64(valueSize))
        let value = Data((0..<valueSize).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        let keys = (0..<operations).map(DiskKeys.key)
        let missing = (0..<operations).map(DiskKeys.missingKey)
        let hitOrder = AccessPattern.shuffled(count: operations, seed: 42)

        var sets = SampleSet(), hits = SampleSet(), misses = SampleSet()
        for run in 0..<runs {
            Progress.log("\(suite): \(group) values, \(operations) ops, run \(run + 1)/\(runs)")
            for kind in strategies {
                let directory = try workspace.makeDirectory("ops-\(kind.name.filter(\.isLetter))")
                defer { workspace.remove(directory) }
                let store = try kind.open(directory)
                defer { store.close() }

                let setTime = try Clock.measure {
                    for key in keys { try store.setValue(value, forKey: key) }
                    try store.flush()
                }
                sets.record(kind.name, isFloor: kind.isFloor, nanoseconds: setTime, operations: operations)

                var bytesRead = 0
                let hitTime = try Clock.measure {
                    for index in hitOrder { bytesRead += try store.value(forKey: keys[index])?.count ?? 0 }
                }
                if bytesRead != operations * valueSize {
                    Progress.log("warning: \(kind.name) read \(bytesRead) bytes, expected \(operations * valueSize)")
                }
                hits.record(kind.name, isFloor: kind.isFloor, nanoseconds: hitTime, operations: operations)

                var found = 0
                let missTime = try Clock.measure {
                    for key in missing where try store.value(forKey: key) != nil { found += 1 }
                }
                if found != 0 { Progress.log("warning: \(kind.name) found \(found) missing keys") }
                misses.record(kind.name, isFloor: kind.isFloor, nanoseconds: missTime, operations: operations)
            }
        }
        return [("set", sets), ("get-hit", hits), ("get-miss", misses)].map { workload, samples in
            var comparison = Comparison(suite: suite, group: group, workload: workload,
                                        operationsPerRun: operations)
            samples.fill(&comparison)
            return comparison
        }
    }
}
