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

        // A strategy with a smaller batch limit sets the first of the keys, reads each
        // of them once (shuffled) and misses as many.
        var notes: [String] = []
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
                let count = min(operations, kind.batchLimit?(valueSize) ?? operations)
                let batchKeys = keys.prefix(count), batchMisses = missing.prefix(count)
                let batchReads = count == operations ? reads : AccessPattern.shuffled(count: count, seed: 42)
                if count < operations, let note = kind.note, !notes.contains(note) { notes.append(note) }

                // One clock read per operation: the batch is the sum of the latencies
                // (the set batch also ends with the store's flush).
                var setTimer = LapTimer(capacity: count)
                for key in batchKeys {
                    try store.setValue(value, forKey: key)
                    setTimer.lap()
                }
                try store.flush()
                sets.record(kind.name, isFloor: kind.isFloor, nanoseconds: setTimer.elapsed(),
                            operations: count, latencies: setTimer.latencies)

                var bytesRead = 0
                var hitTimer = LapTimer(capacity: batchReads.count)
                for index in batchReads {
                    bytesRead += try store.value(forKey: batchKeys[index])?.count ?? 0
                    hitTimer.lap()
                }
                let hitTime = hitTimer.elapsed()
                if bytesRead != batchReads.count * valueSize {
                    Progress.log("warning: \(kind.name) read \(bytesRead) bytes, expected \(batchReads.count * valueSize)")
                }
                hits.record(kind.name, isFloor: kind.isFloor, nanoseconds: hitTime, operations: batchReads.count,
                            latencies: hitTimer.latencies)

                var found = 0
                var missTimer = LapTimer(capacity: count)
                for key in batchMisses {
                    if try store.value(forKey: key) != nil { found += 1 }
                    missTimer.lap()
                }
                let missTime = missTimer.elapsed()
                if found != 0 { Progress.log("warning: \(kind.name) found \(found) missing keys") }
                misses.record(kind.name, isFloor: kind.isFloor, nanoseconds: missTime, operations: count,
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
            comparison.notes += notes
            return comparison
        }
    }
}
