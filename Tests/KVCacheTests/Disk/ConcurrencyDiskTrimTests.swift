import Dispatch
import Foundation
import Testing
@testable import KVCache

/// Trim steps and the steps of `removeAll(progress:)` run on the commit connection,
/// without the store's lock (issue 13, item 2): held open inside their transaction
/// (their deletes done, the commit not yet), they let sets, removes, reads and the
/// totals of other callers complete. Before, each step ran under the store's lock,
/// and a set waited for it (35-52 ms per 4,096-row step in `kvcache-bench concurrency`).
@Suite struct ConcurrencyDiskTrimTests {
    typealias BoundedCall = ConcurrencyCacheKeyLockTests.BoundedCall

    static let steps: [(String, @Sendable (DiskCache) -> Void)] = [
        ("trim", { _ = try? $0.trim(toCount: 50) }),
        ("removeAll(progress:)", { try? $0.removeAll(progress: { _, _ in }) }),
    ]

    @Test(arguments: 0..<2)
    func callsCompleteWhileAStepIsHeldOpen(index: Int) throws {
        let (name, step) = Self.steps[index]
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = 3600 })
        defer { try? cache.close() }
        for index in 0..<200 { try cache.setValue(bytes(100, seed: UInt8(index % 251)), forKey: "k\(index)") }
        try cache.flush()
        let paused = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        cache.hooks.workWillCommit.setOnce {
            paused.signal()
            resume.wait()
        }
        let finished = DispatchSemaphore(value: 0)
        Thread {
            step(cache)
            finished.signal()
        }.start()
        #expect(paused.wait(timeout: .now() + ConcurrencyCacheKeyLockTests.stuck) == .success)
        let set = BoundedCall { (try? cache.setValue(bytes(100, seed: 7), forKey: "N")) != nil }
        let fileSet = BoundedCall { (try? cache.setValue(bytes(30_000, seed: 8), forKey: "G")) != nil }
        let remove = BoundedCall { (try? cache.removeValue(forKey: "k199")) != nil }
        // A row the step deletes, not committed yet: still the committed value.
        let oldest = BoundedCall { try? cache.value(forKey: "k0") }
        let count = BoundedCall { try? cache.totalCount }
        let statistics = BoundedCall { cache.statistics.count }
        let stepHeld = finished.wait(timeout: .now()) == .timedOut
        resume.signal()
        finished.wait()
        #expect(stepHeld, "\(name) did not hold its step open")
        for (call, what) in [(set.finishedInTime, "set"), (fileSet.finishedInTime, "file set"),
                             (remove.finishedInTime, "remove"), (oldest.finishedInTime, "read"),
                             (count.finishedInTime, "totalCount"), (statistics.finishedInTime, "statistics")] {
            #expect(call, "a \(what) waited for a step of \(name)")
        }
        #expect(set.result == true && fileSet.result == true && remove.result == true)
        #expect(oldest.result == .some(bytes(100, seed: 0)))
        // Before the step commits, the totals are the committed ones plus the writes made since.
        #expect(count.result == .some(201) && statistics.result == .some(201))
        // The trim's next step takes the writes made meanwhile into account; removeAll's
        // next step removes them.
        let trimmed = name == "trim"
        #expect(try cache.totalCount == (trimmed ? 50 : 0))
        #expect(try cache.value(forKey: "N") == (trimmed ? bytes(100, seed: 7) : nil))
        #expect(try cache.value(forKey: "G") == (trimmed ? bytes(30_000, seed: 8) : nil))
        #expect(try cache.value(forKey: "k199") == nil)
        #expect(try cache.value(forKey: "k0") == nil)
        try cache.flush()
        let report = try cache.verify(orphanGracePeriod: 0)
        #expect(report.isHealthy, "\(report)")
        #expect(cache.statistics.count == (trimmed ? 50 : 0))
    }
}
