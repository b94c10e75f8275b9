import Foundation
@_spi(Benchmarks) import KVCache

/// `MemoryCache` (default configuration) that times its serialized sections.
final class TimedSectionsKVCacheStrategy: MemoryStrategy, @unchecked Sendable {
    static var name: String { "KVCache MemoryCache (sections timed)" }

    let cache: MemoryCache<String, SmallValue>

    required init(countLimit: Int?) {
        // Only a negative count limit is refused, and the benchmarks' limits are positive.
        cache = try! MemoryCache(configuration: .init(countLimit: countLimit ?? .max), measuringSerialSections: true)
    }

    func setValue(_ value: SmallValue, forKey key: String) { cache.setValue(value, forKey: key) }
    func value(forKey key: String) -> SmallValue? { cache.value(forKey: key) }

    func drain() {
        cache.removeAll()
        cache.waitForBackgroundWork()
    }
}

/// The figures that predict more cores than the machine has: per operation of each
/// workload and thread count, the time `MemoryCache` spends in sections that one thread
/// at a time runs (drains and sets under the cache's lock, in-place sets under a stripe's
/// lock in every lane), the time readers waited for a lane's lock, and the share of uses
/// the policy never saw (dropped). The cache's lock is free for at most 1 ÷ (its time
/// per operation) operations a second, whatever the cores: its ceiling.
struct SerialSectionsReport {
    var threadCounts: [Int]
    var passes: Int

    func run(data: MemoryWorkloadData) {
        Progress.log("memory: serialized sections at \(threadCounts.map(String.init).joined(separator: ", ")) threads")
        var lines = ["memory · serialized sections per operation, KVCache MemoryCache (\(data.keyCount) keys, "
            + "\(passes) passes; timing adds two clock reads per section)"]
        let header = ["workload", "threads", "ns/op", "drain ns/op", "locked set ns/op", "lock wait ns/op",
                      "in-place set ns/op", "read waits/M", "read wait ns/op", "uses dropped", "lock ceiling"]
        var rows: [[String]] = []
        for workload in [MemoryWorkload.getHitUniform, .getHitZipf, .mixedZipf] where MemoryBenchmark.selection.includes(workload) {
            for threads in threadCounts {
                rows.append([workload.rawValue, "\(threads)"] + measure(workload, threads: threads, data: data))
            }
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func format(_ row: [String]) -> String {
            "  " + row.indices.map { column in
                column == 0 ? row[column].padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - row[column].count) + row[column]
            }.joined(separator: "  ")
        }
        lines.append(format(header))
        lines.append("  " + String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1)))
        lines += rows.map(format)
        lines.append("  per operation over every operation of the run (an untimed pass on every thread, then the "
            + "timed passes); uses dropped: hits and in-place sets the policy never saw; lock ceiling: operations "
            + "a second the cache's lock allows, 1 ÷ (drain + locked set) ns/op")
        Output.print(lines.joined(separator: "\n") + "\n")
    }

    private func measure(_ workload: MemoryWorkload, threads: Int, data: MemoryWorkloadData) -> [String] {
        let strategy = TimedSectionsKVCacheStrategy(countLimit: data.keyCount)
        for (index, key) in data.keys.enumerated() { strategy.setValue(SmallValue(index), forKey: key) }
        let keys = MemoryBenchmark.lookupKeys(TimedSectionsKVCacheStrategy.self,
                                              workload == .getHitUniform ? data.uniformKeys : data.zipfKeys,
                                              threads: threads)
        let setEvery = workload == .mixedZipf ? MemoryBenchmark.mixedSetInterval : nil
        let before = strategy.cache.serialSections
        let outcome = MemoryBenchmark.get(strategy, keys: keys, threads: threads, passes: passes, setEvery: setEvery)
        let after = strategy.cache.serialSections
        strategy.drain()
        let count = data.keyCount
        // The untimed pass looks every key up once, over all threads.
        let operations = Double(count * (passes + 1))
        func perOperation(_ nanoseconds: Int) -> String { String(format: "%.1f", Double(nanoseconds) / operations) }
        let drain = after.drainNanoseconds - before.drainNanoseconds
        let lockedSet = after.lockedSetNanoseconds - before.lockedSetNanoseconds
        let uses = (after.hits - before.hits) + (after.inPlaceSets - before.inPlaceSets)
        let dropped = after.droppedUses - before.droppedUses
        let cacheLock = Double(drain + lockedSet) / operations
        return [
            String(format: "%.1f", Double(outcome.nanoseconds) / Double(count * passes)),
            perOperation(drain),
            perOperation(lockedSet),
            perOperation(after.lockedSetWaitNanoseconds - before.lockedSetWaitNanoseconds),
            perOperation(after.inPlaceSetNanoseconds - before.inPlaceSetNanoseconds),
            String(format: "%.0f", Double(after.readWaits - before.readWaits) / operations * 1e6),
            perOperation(after.readWaitNanoseconds - before.readWaitNanoseconds),
            String(format: "%.1f %%", 100 * Double(dropped) / Double(max(uses, 1))),
            cacheLock > 0 ? TablePrinter.rate(perSecond: 1e9 / cacheLock) + "/s" : "–",
        ]
    }
}
