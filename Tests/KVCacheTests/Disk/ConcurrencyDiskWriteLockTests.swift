import Dispatch
import Foundation
import Testing
@testable import KVCache

/// Writers touch memory under the store's lock (issue 13, item 2): a call that has
/// to wait for another process's write lock (a trim, removeAll, keys, a flush, a
/// full buffer) waits for it on the commit thread, without the lock, so other
/// callers' sets and removes complete meanwhile. Before, the wait ran under the lock
/// every writer takes, for up to the busy timeout.
@Suite struct ConcurrencyDiskWriteLockTests {
    typealias BoundedCall = ConcurrencyCacheKeyLockTests.BoundedCall
    typealias Blocked = ConcurrencyDiskReadPathTests.Blocked

    static let waitingCalls: [(String, @Sendable (DiskCache) -> Void)] = [
        ("trim", { _ = try? $0.trim(toCount: 3) }),
        ("removeExpired", { _ = try? $0.removeExpired() }),
        ("removeAll", { try? $0.removeAll() }),
        ("keys", { _ = try? $0.keys(limit: 10) }),
        ("flush", { try? $0.flush() }),
        ("verify", { _ = try? $0.verify(repair: true, orphanGracePeriod: .seconds(0)) }),
    ]

    /// Starts `work` on a thread of its own and returns once it waits, without the
    /// store's lock, for the commit that waits for the other writer.
    static func startWaitingCall(_ blocked: Blocked, _ work: @escaping @Sendable (DiskCache) -> Void)
        -> DispatchSemaphore {
        let cache = blocked.cache
        let waiting = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let hook: @Sendable () -> Void = { waiting.signal() }
        cache.hooks.commitWillWaitOffLock.withLock { $0 = hook }
        cache.hooks.flushWillWait.withLock { $0 = hook }
        Thread {
            work(cache)
            finished.signal()
        }.start()
        #expect(waiting.wait(timeout: .now() + ConcurrencyCacheKeyLockTests.stuck) == .success)
        cache.hooks.commitWillWaitOffLock.withLock { $0 = nil }
        cache.hooks.flushWillWait.withLock { $0 = nil }
        return finished
    }

    @Test(arguments: 0..<6)
    func setsAndRemovesCompleteWhileACallWaitsForAnotherWriter(index: Int) throws {
        let (name, work) = Self.waitingCalls[index]
        let blocked = try Blocked()
        defer { blocked.remove() }
        let cache = blocked.cache
        let finished = Self.startWaitingCall(blocked, work)
        let set = BoundedCall { (try? cache.setValue(bytes(100, seed: 7), forKey: "N")) != nil }
        let fileSet = BoundedCall { (try? cache.setValue(bytes(30_000, seed: 8), forKey: "G")) != nil }
        let remove = BoundedCall { (try? cache.removeValue(forKey: "A")) != nil }
        let count = BoundedCall { try? cache.totalCount }
        let callWaited = finished.wait(timeout: .now()) == .timedOut
        try blocked.release()
        finished.wait()
        #expect(callWaited, "\(name) did not wait for the other writer")
        for (call, what) in [(set.finishedInTime, "set"), (fileSet.finishedInTime, "file set"),
                             (remove.finishedInTime, "remove"), (count.finishedInTime, "totalCount")] {
            #expect(call, "a \(what) waited for \(name)")
        }
        #expect(set.result == true && fileSet.result == true && remove.result == true)
        // Made while it waited: kept, unless removeAll (concurrent with them) took them too.
        let n = try cache.value(forKey: "N")
        let g = try cache.value(forKey: "G")
        #expect(n == bytes(100, seed: 7) || (name == "removeAll" && n == nil))
        #expect(g == bytes(30_000, seed: 8) || (name == "removeAll" && g == nil))
        #expect(try cache.value(forKey: "A") == nil)
        try cache.flush()
        #expect(try cache.value(forKey: "N") == n)
        #expect(try cache.value(forKey: "G") == g)
        #expect(try cache.value(forKey: "A") == nil)
        let report = try cache.verify(orphanGracePeriod: .seconds(0))
        #expect(report.isHealthy, "\(report)")
    }

    /// With the write lock held past the busy timeout, the waiting call still fails
    /// with busy, as it did when it waited under the lock; nothing is lost.
    @Test func aCallStillFailsBusyAfterTheBusyTimeout() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: DiskCloseTests.waitingConfiguration())
        defer { try? cache.close() }
        try cache.setValue(bytes(100, seed: 1), forKey: "A")
        let other = try Database(path: dir.manifestPath, busyTimeout: 0)
        try other.execute("BEGIN IMMEDIATE")
        #expect(throws: KVCacheError.self) { try cache.trim(toCount: 0) }
        #expect(throws: KVCacheError.self) { try cache.flush() }
        try other.execute("COMMIT")
        other.close()
        #expect(try cache.value(forKey: "A") == bytes(100, seed: 1))
        try cache.flush()
        #expect(try cache.trim(toCount: 0) == 1)
        #expect(try cache.totalCount == 0)
    }

    /// A full buffer waits for the batch in flight without the lock, and its set is
    /// kept once that batch has committed.
    @Test func aSetIntoAFullBufferWaitsWithoutTheLock() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.busyTimeout = .seconds(60)
            $0.groupCommitDelay = .seconds(3600)
            $0.groupCommitMaxWrites = 4
        })
        defer { try? cache.close() }
        let other = try Database(path: dir.manifestPath, busyTimeout: 0)
        try other.execute("BEGIN IMMEDIATE")
        let waiting = DispatchSemaphore(value: 0)
        cache.hooks.commitWillWaitOffLock.withLock { $0 = { waiting.signal() } }
        let finished = DispatchSemaphore(value: 0)
        Thread {
            // The first sets start a batch early, which waits for the other writer; the
            // buffer then fills behind it, and the set that finds it full waits.
            for index in UInt8(0)..<12 { try? cache.setValue(bytes(100, seed: index), forKey: "k\(index)") }
            finished.signal()
        }.start()
        #expect(waiting.wait(timeout: .now() + ConcurrencyCacheKeyLockTests.stuck) == .success)
        cache.hooks.commitWillWaitOffLock.withLock { $0 = nil }
        // The lock is free: a call that takes it completes.
        let closedCheck = BoundedCall { cache.isClosed }
        #expect(closedCheck.finishedInTime && closedCheck.result == false)
        try other.execute("COMMIT")
        other.close()
        finished.wait()
        for index in UInt8(0)..<12 { #expect(try cache.value(forKey: "k\(index)") == bytes(100, seed: index)) }
        try cache.flush()
        #expect(try cache.totalCount == 12)
    }

    /// `flush(.synced)` checkpoints and fsyncs without the lock: held open there, it
    /// lets sets and removes complete, and what it synced survives a reopen.
    @Test func setsCompleteWhileAFlushSyncs() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.syncsFiles = true })
        try cache.setValue(bytes(100, seed: 1), forKey: "A")
        let syncing = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        cache.hooks.flushWillSync.withLock {
            $0 = {
                syncing.signal()
                resume.wait()
            }
        }
        let finished = DispatchSemaphore(value: 0)
        Thread {
            try? cache.flush()
            finished.signal()
        }.start()
        #expect(syncing.wait(timeout: .now() + ConcurrencyCacheKeyLockTests.stuck) == .success)
        cache.hooks.flushWillSync.withLock { $0 = nil }
        let set = BoundedCall { (try? cache.setValue(bytes(30_000, seed: 2), forKey: "B")) != nil }
        let remove = BoundedCall { (try? cache.removeValue(forKey: "C")) != nil }
        resume.signal()
        finished.wait()
        #expect(set.finishedInTime && remove.finishedInTime)
        #expect(set.result == true)
        try cache.close()
        let reopened = try DiskCache(directory: dir.url, configuration: .testing())
        defer { try? reopened.close() }
        #expect(try reopened.value(forKey: "A") == bytes(100, seed: 1))
        #expect(try reopened.value(forKey: "B") == bytes(30_000, seed: 2))
    }

    /// `setValueIfAbsent` decides under SQLite's write lock (issue 38, part 5): while another
    /// writer (another process) holds the lock with a row of the key not committed yet, the
    /// call waits for it, without the store's lock (a set completes meanwhile), then finds
    /// that row and stores nothing; its file is deleted. Before, it decided at once on this
    /// process's view and returned true, and its group commit later replaced the other
    /// writer's row.
    @Test func setValueIfAbsentWaitsForAnotherWritersRowAndStoresNothing() throws {
        let blocked = try Blocked()
        defer { blocked.remove() }
        let cache = blocked.cache
        try blocked.other.execute("""
            INSERT INTO manifest(key, size, modification_time, last_access_time, inline_data)
                VALUES ('K', 3, 0, 0, x'010203');
            UPDATE stats SET count = count + 1, size = size + 3 WHERE id = 1;
            """)
        // Signalled when the call waits for the other writer's commit, or when it returns.
        let waitingOrDone = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let stored = MutexBox<Bool?>(nil)
        cache.hooks.commitWillWaitOffLock.withLock { $0 = { waitingOrDone.signal() } }
        Thread {
            let result = try? cache.setValueIfAbsent(bytes(30_000, seed: 9), forKey: "K")
            stored.withLock { $0 = result }
            finished.signal()  // first: a call that did not wait has finished when this is seen
            waitingOrDone.signal()
        }.start()
        #expect(waitingOrDone.wait(timeout: .now() + ConcurrencyCacheKeyLockTests.stuck) == .success)
        cache.hooks.commitWillWaitOffLock.withLock { $0 = nil }
        let set = BoundedCall { (try? cache.setValue(bytes(100, seed: 7), forKey: "N")) != nil }
        let callWaited = finished.wait(timeout: .now()) == .timedOut
        try blocked.release()
        if callWaited { finished.wait() }
        #expect(callWaited, "setValueIfAbsent decided without waiting for the other writer")
        #expect(set.finishedInTime && set.result == true)
        #expect(stored.withLock { $0 } == false)
        #expect(try cache.value(forKey: "K") == Data([1, 2, 3]))
        try cache.flush()
        #expect(try cache.value(forKey: "K") == Data([1, 2, 3]))
        #expect(try cache.value(forKey: "N") == bytes(100, seed: 7))
        let report = try cache.verify(orphanGracePeriod: .seconds(0))
        #expect(report.isHealthy, "\(report)")
        #expect(blocked.dir.dataFiles().count == 1)  // "F"'s; the loser's file is gone
    }
}
