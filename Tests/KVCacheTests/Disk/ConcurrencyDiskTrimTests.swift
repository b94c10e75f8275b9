import Dispatch
import Foundation
import Testing
@testable import KVCache

/// Trim steps, `removeAll()` and the steps of `removeAll(progress:)` run on the commit
/// connection, without the store's lock (issue 13, item 2): held open inside their
/// transaction (their deletes done, the commit not yet), they let sets, removes, reads
/// and the totals of other callers complete. Before, each step ran under the store's
/// lock, and a set waited for it (35-52 ms per 4,096-row step in `kvcache-bench concurrency`).
@Suite struct ConcurrencyDiskTrimTests {
    typealias BoundedCall = ConcurrencyCacheKeyLockTests.BoundedCall

    /// A one-shot pause at a hook: the work that reaches it waits there until `resume()`.
    final class Pause: Sendable {
        private let reached = DispatchSemaphore(value: 0)
        private let resumed = DispatchSemaphore(value: 0)

        init(at hook: DiskTestHooks.Hook) {
            hook.setOnce { [reached, resumed] in
                reached.signal()
                resumed.wait()
            }
        }

        /// True once the work has reached the hook (within the failure bound).
        func waitUntilReached() -> Bool {
            reached.wait(timeout: .now() + ConcurrencyCacheKeyLockTests.stuck) == .success
        }

        func resume() { resumed.signal() }
    }

    /// Runs `body` on a thread of its own; the semaphore is signalled when it returns.
    static func inBackground(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let finished = DispatchSemaphore(value: 0)
        Thread {
            body()
            finished.signal()
        }.start()
        return finished
    }

    /// Each call, and the entries it leaves: whether the writes made while its step was
    /// held open stay (they come after it) or go (a later step removes them).
    static let steps: [(String, @Sendable (DiskCache) -> Void, count: Int, keepsLaterWrites: Bool)] = [
        ("trim", { _ = try? $0.trim(toCount: 50) }, 50, true),
        ("removeAll(progress:)", { try? $0.removeAll(progress: { _, _ in }) }, 0, false),
        // Its data folder is swapped after the commit: G's file, written meanwhile, comes back.
        ("removeAll", { try? $0.removeAll() }, 2, true),
    ]

    @Test(arguments: 0..<3)
    func callsCompleteWhileAStepIsHeldOpen(index: Int) throws {
        let (name, step, expectedCount, keepsLaterWrites) = Self.steps[index]
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(3600) })
        defer { try? cache.close() }
        for index in 0..<200 { try cache.setValue(bytes(100, seed: UInt8(index % 251)), forKey: "k\(index)") }
        try cache.flush()
        let pause = Pause(at: cache.hooks.workWillCommit)
        let finished = Self.inBackground { step(cache) }
        #expect(pause.waitUntilReached())
        let set = BoundedCall { (try? cache.setValue(bytes(100, seed: 7), forKey: "N")) != nil }
        let fileSet = BoundedCall { (try? cache.setValue(bytes(30_000, seed: 8), forKey: "G")) != nil }
        let remove = BoundedCall { (try? cache.removeValue(forKey: "k199")) != nil }
        // A row the step deletes, not committed yet: still the committed value.
        let oldest = BoundedCall { try? cache.value(forKey: "k0") }
        let count = BoundedCall { try? cache.totalCount }
        let statistics = BoundedCall { cache.statistics.count }
        let stepHeld = finished.wait(timeout: .now()) == .timedOut
        pause.resume()
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
        #expect(try cache.totalCount == expectedCount)
        #expect(try cache.value(forKey: "N") == (keepsLaterWrites ? bytes(100, seed: 7) : nil))
        #expect(try cache.value(forKey: "G") == (keepsLaterWrites ? bytes(30_000, seed: 8) : nil))
        #expect(try cache.value(forKey: "k199") == nil)
        #expect(try cache.value(forKey: "k0") == nil)
        try cache.flush()
        let report = try cache.verify(orphanGracePeriod: .seconds(0))
        #expect(report.isHealthy, "\(report)")
        #expect(cache.statistics.count == expectedCount && cache.statistics.brokenEntries == 0)
        cache.waitForBackgroundWork()
        #expect(dir.dataFiles().count == (keepsLaterWrites ? 1 : 0))
    }

    /// verify's repairs commit on the commit connection too: held open before the commit
    /// that removes a row whose file is missing, they let a set complete. Before, each
    /// repair step committed under the store's lock.
    @Test func aSetCompletesWhileAVerifyRepairIsHeldOpen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(3600) })
        defer { try? cache.close() }
        try cache.setValue(bytes(30_000, seed: 1), forKey: "F")
        try cache.setValue(bytes(100, seed: 2), forKey: "A")
        try cache.flush()
        for name in dir.dataFiles() { try FileManager.default.removeItem(atPath: dir.dataPath + "/" + name) }
        let pause = Pause(at: cache.hooks.workWillCommit)
        let report = MutexBox<DiskCache.VerificationReport?>(nil)
        let finished = Self.inBackground {
            let result = try? cache.verify(repair: true, orphanGracePeriod: .seconds(0))
            report.withLock { $0 = result }
        }
        #expect(pause.waitUntilReached())
        let set = BoundedCall { (try? cache.setValue(bytes(100, seed: 7), forKey: "N")) != nil }
        let verifyHeld = finished.wait(timeout: .now()) == .timedOut
        pause.resume()
        finished.wait()
        #expect(verifyHeld)
        #expect(set.finishedInTime, "a set waited for verify's repair")
        let found = try #require(report.withLock { $0 } as DiskCache.VerificationReport?)
        #expect(found.missingFiles.map(\.key) == ["F"] && found.repairs?.removedEntries == 1)
        #expect(try cache.value(forKey: "F") == nil)
        #expect(try cache.value(forKey: "N") == bytes(100, seed: 7))
        #expect(try cache.value(forKey: "A") == bytes(100, seed: 2))
        try cache.flush()
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
        #expect(try cache.totalCount == 2)
    }

    /// A read of an uncommitted file value while removeAll swaps the data folder (held
    /// between moving the old folder away and bringing that file back) returns the value
    /// once the swap is done: it does not call the row broken. Before, it found no file,
    /// counted a broken entry, queued the value's removal and missed.
    @Test func aReadDuringTheFolderSwapFindsAnUncommittedFileValue() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(3600) })
        defer { try? cache.close() }
        try cache.setValue(bytes(30_000, seed: 1), forKey: "old")
        try cache.flush()
        // removeAll's commit is held until P is set: P's write comes after it, uncommitted.
        let commit = Pause(at: cache.hooks.workWillCommit)
        let swap = Pause(at: cache.hooks.dataFolderWillReturnFiles)
        let removed = Self.inBackground { try? cache.removeAll() }
        #expect(commit.waitUntilReached())
        try cache.setValue(bytes(30_000, seed: 2), forKey: "P")
        commit.resume()
        #expect(swap.waitUntilReached())
        let read = MutexBox<Data??>(nil)
        let readDone = Self.inBackground {
            let value = try? cache.value(forKey: "P")
            read.withLock { $0 = .some(value) }
        }
        // The read finds no file while the swap is held: it waits for the swap to end (its
        // last attempt takes the store's lock) rather than answering.
        let answeredDuringSwap = readDone.wait(timeout: .now() + .milliseconds(200)) == .success
        swap.resume()
        if !answeredDuringSwap { readDone.wait() }
        removed.wait()
        #expect(!answeredDuringSwap, "the read answered while P's file was away")
        #expect(read.withLock { $0 } == .some(bytes(30_000, seed: 2)))
        #expect(cache.statistics.brokenEntries == 0)
        try cache.flush()
        #expect(try cache.value(forKey: "P") == bytes(30_000, seed: 2) && cache.value(forKey: "old") == nil)
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
    }
}
