import Foundation

/// Set, get-hit and get-miss of one value size for several strategies. Each
/// run opens every strategy on an empty directory, in turn (rotating which goes
/// first), so drift on a shared machine spreads over all of them.
struct ValueSizeRun {
    var strategies: [DiskStrategyKind]
    var valueSize: Int
    var operations: Int
    var runs: Int
    var workspace: Workspace
    /// Prefix for progress lines and the comparisons' suite.
    var suite = "disk"
    /// A store in another process, run after the in-process ones in each run.
    var peer: PythonDiskcachePeer?
    /// Get-hits per run at least: with few large values, the keys are read in
    /// several shuffled passes, so the timed batch is not a millisecond of noise.
    var minimumReads = 0

    /// The set, get-hit and get-miss comparisons, in that order.
    func measure() throws -> [Comparison] {
        let group = DiskBenchmark.label(bytes: valueSize)
        var random = SplitMix64(seed: UInt64(valueSize))
        let value = Data((0..<valueSize).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        let keys = (0..<operations).map(DiskKeys.key)
        let missing = (0..<operations).map(DiskKeys.missingKey)
        let hitOrder = AccessPattern.shuffled(count: operations, seed: 42)
        let reads = (0..<max(1, (minimumReads + operations - 1) / operations)).flatMap { pass in
            AccessPattern.shuffled(count: operations, seed: 42 + UInt64(pass))
        }

        var sets = SampleSet(), hits = SampleSet(), misses = SampleSet()
        for run in 0..<runs {
            Progress.log("\(suite): \(group) values, \(operations) ops, run \(run + 1)/\(runs)")
            // Each run starts one strategy later, so none always follows the same
            // neighbour's writes (writeback and cache state would favour a position).
            let first = run % strategies.count
            for kind in strategies[first...] + strategies[..<first] {
                let directory = try workspace.makeDirectory("ops-\(kind.name.filter(\.isLetter))")
                defer { workspace.remove(directory) }
                let store = try kind.open(directory)
                defer { store.close() }

                // One clock read per operation: the batch is the sum of the latencies
                // (the set batch also ends with the store's flush).
                var setTimer = LapTimer(capacity: operations)
                for key in keys {
                    try store.setValue(value, forKey: key)
                    setTimer.lap()
                }
                try store.flush()
                sets.record(kind.name, isFloor: kind.isFloor, nanoseconds: setTimer.elapsed(),
                            operations: operations, latencies: setTimer.latencies)

                var bytesRead = 0
                var hitTimer = LapTimer(capacity: reads.count)
                for index in reads {
                    bytesRead += try store.value(forKey: keys[index])?.count ?? 0
                    hitTimer.lap()
                }
                let hitTime = hitTimer.elapsed()
                if bytesRead != reads.count * valueSize {
                    Progress.log("warning: \(kind.name) read \(bytesRead) bytes, expected \(reads.count * valueSize)")
                }
                hits.record(kind.name, isFloor: kind.isFloor, nanoseconds: hitTime, operations: reads.count,
                            latencies: hitTimer.latencies)

                var found = 0
                var missTimer = LapTimer(capacity: operations)
                for key in missing {
                    if try store.value(forKey: key) != nil { found += 1 }
                    missTimer.lap()
                }
                let missTime = missTimer.elapsed()
                if found != 0 { Progress.log("warning: \(kind.name) found \(found) missing keys") }
                misses.record(kind.name, isFloor: kind.isFloor, nanoseconds: missTime, operations: operations,
                              latencies: missTimer.latencies)
            }
            if let peer, peer.isUsable {
                let directory = try workspace.makeDirectory("ops-peer")
                defer { workspace.remove(directory) }
                if let result = peer.run(directory: directory, valueSize: valueSize, operations: operations,
                                         hitOrder: hitOrder) {
                    sets.record(peer.name, isFloor: false, nanoseconds: result.set.nanoseconds,
                                operations: operations, latencies: result.set.latencies)
                    hits.record(peer.name, isFloor: false, nanoseconds: result.getHit.nanoseconds,
                                operations: operations, latencies: result.getHit.latencies)
                    misses.record(peer.name, isFloor: false, nanoseconds: result.getMiss.nanoseconds,
                                  operations: operations, latencies: result.getMiss.latencies)
                }
            }
        }
        return [("set", sets, operations), ("get-hit", hits, reads.count), ("get-miss", misses, operations)]
            .map { workload, samples, count in
            var comparison = Comparison(suite: suite, group: group, workload: workload,
                                        operationsPerRun: count)
            comparison.valueSize = valueSize
            samples.fill(&comparison)
            return comparison
        }
    }
}
