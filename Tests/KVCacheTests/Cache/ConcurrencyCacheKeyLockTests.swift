import Dispatch
import Foundation
import Testing
@testable import KVCache

/// Per-key coordination in the facade (issue 13, item 3): a disk hit for one key
/// never waits for a write of another, and its promotion into memory is dropped
/// only if its own key changed. Before, one recursive lock covered every mutation
/// and a global epoch every promotion: a disk hit waited for another key's whole
/// disk write (943 ms behind a 256 MiB value), and any write anywhere dropped it.
@Suite struct ConcurrencyCacheKeyLockTests {
    /// How long a step that must not wait may take before the test calls it stuck
    /// (a bound for a failure, not a sleep: it passes as soon as the step is done).
    static let stuck: DispatchTimeInterval = .seconds(60)

    /// A read (or any call) on a thread of its own, waited for at most `stuck`.
    final class BoundedCall<Result: Sendable>: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private let box = MutexBox<Result?>(nil)
        /// Whether the call finished within the bound.
        private(set) var finishedInTime = false

        init(_ body: @escaping @Sendable () -> Result) {
            Thread { [box, done] in
                let result = body()
                box.withLock { $0 = result }
                done.signal()
            }.start()
            finishedInTime = done.wait(timeout: .now() + ConcurrencyCacheKeyLockTests.stuck) == .success
        }

        /// The result, once the call has finished (waits if it had not in time).
        var result: Result? {
            if !finishedInTime { done.wait(); done.signal() }
            return box.withLock { $0 }
        }
    }

    /// A cache holding "A" on disk only (memory dropped it), so reading it is a disk hit.
    static func cacheWithAOnDiskOnly(_ fixture: CacheFixture) throws -> Cache<Data> {
        let cache = try fixture.make()
        try cache.setValue(bytes(100, seed: 1), forKey: "A")
        cache.memory.removeValue(forKey: "A")
        return cache
    }

    /// A write that runs on a thread of its own (a blocked pool thread must not hold up
    /// the test) and is held open inside its mutation, with its locks; nil if it never got
    /// there. `finish` lets it complete and waits for it.
    static func holdWriteOpen(_ cache: Cache<Data>, value: Data, forKey written: String) -> HeldWrite? {
        let inWrite = DispatchSemaphore(value: 0)
        let finishWrite = DispatchSemaphore(value: 0)
        cache.writes.duringMutation = { key in
            guard key == written else { return }
            inWrite.signal()
            finishWrite.wait()
        }
        let writer = DispatchSemaphore(value: 0)
        Thread {
            try? cache.setValue(value, forKey: written)
            writer.signal()
        }.start()
        let held = inWrite.wait(timeout: .now() + stuck) == .success
        cache.writes.duringMutation = nil
        let finish = {
            finishWrite.signal()
            writer.wait()
        }
        guard held else {
            finish()
            return nil
        }
        return HeldWrite(finish: finish)
    }

    /// A write held open by `holdWriteOpen`.
    struct HeldWrite {
        /// Lets the write complete and waits for it.
        let finish: () -> Void
    }

    @Test func aDiskHitCompletesWhileAnotherKeysWriteIsHeldOpen() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try Self.cacheWithAOnDiskOnly(fixture)
        let write = try #require(Self.holdWriteOpen(cache, value: bytes(30_000, seed: 2), forKey: "B"))
        // B's write is held open, with its locks. A's disk read and promotion go on.
        let read = BoundedCall { try? cache.result(forKey: "A") }
        write.finish()
        #expect(read.finishedInTime, "the read of A waited for the write of B")
        guard case .disk(let value)?? = read.result else {
            Issue.record("A was not a disk hit: \(String(describing: read.result))")
            return
        }
        #expect(value == bytes(100, seed: 1))
        // Promoted: B's write did not drop it.
        #expect(cache.memory.value(forKey: "A") == bytes(100, seed: 1))
        #expect(try cache.value(forKey: "B") == bytes(30_000, seed: 2))
        cache.writes.duringMutation = nil
    }

    /// A read that begins while a write of its key runs (after the write bumped the key's
    /// generation, before it changed the levels) reads the old value from disk; its promotion
    /// must not put that value in memory over the write's (issue 38 (4)). Before, the key's
    /// generation was bumped only when a mutation began, so the promotion saw no change and
    /// memory kept the old value beside the new one on disk.
    @Test func aReadBegunDuringAWriteOfItsKeyDoesNotPromoteTheOldValue() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try Self.cacheWithAOnDiskOnly(fixture)
        let write = try #require(Self.holdWriteOpen(cache, value: bytes(100, seed: 2), forKey: "A"))
        // The write holds A's lock, before its body. A read of A: a memory miss, the old
        // value from disk, then its promotion waits for the lock.
        let readFromDisk = DispatchSemaphore(value: 0)
        cache.writes.willPromote = { key in if key == "A" { readFromDisk.signal() } }
        let read = MutexBox<CacheResult<Data>?>(nil)
        let readDone = DispatchSemaphore(value: 0)
        Thread {
            read.withLock { $0 = try? cache.result(forKey: "A") }
            readDone.signal()
        }.start()
        #expect(readFromDisk.wait(timeout: .now() + Self.stuck) == .success)
        cache.writes.willPromote = nil
        write.finish()
        readDone.wait()
        // The read began before the write returned: it may return the old value...
        #expect(read.withLock { $0?.value } == bytes(100, seed: 1))
        // ...but neither level keeps it.
        #expect(cache.memory.value(forKey: "A") == bytes(100, seed: 2))
        #expect(try cache.disk.value(forKey: "A") == bytes(100, seed: 2))
        #expect(try cache.value(forKey: "A") == bytes(100, seed: 2))
    }

    /// A read that begins while a write of its key is under way, and promotes before the
    /// write ends, may hold the value the write replaces: the promotion is dropped at
    /// once (it does not wait for the write), and memory keeps the write's value.
    @Test func aPromotionDuringAWriteOfItsKeyIsDroppedWithoutWaiting() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try Self.cacheWithAOnDiskOnly(fixture)
        let write = try #require(Self.holdWriteOpen(cache, value: bytes(100, seed: 2), forKey: "A"))
        let promoted = BoundedCall { cache.writes.promote(cache.writes.beginRead("A")) {} }
        write.finish()
        #expect(promoted.finishedInTime, "the promotion waited for the write")
        #expect(promoted.result == false)
        #expect(cache.memory.value(forKey: "A") == bytes(100, seed: 2))
    }

    @Test func aPromotionIsDroppedOnlyIfItsOwnKeyChanged() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try Self.cacheWithAOnDiskOnly(fixture)
        // Keys of other stripes (a key of A's own stripe, 1 in 256, would drop it too).
        let stripeOfA = KeyStripes.stripe(of: ByteWiseKey("A"))
        #expect(["B", "C", "X"].allSatisfy { KeyStripes.stripe(of: ByteWiseKey($0)) != stripeOfA })
        // Another key's writes and removals meanwhile: the promotion stands.
        var token = cache.writes.beginRead("A")
        try cache.setValue(bytes(10), forKey: "B")
        try cache.removeValue(forKey: "C")
        #expect(cache.writes.promote(token) {})
        // Its own key set meanwhile: dropped (the newer value is in memory).
        token = cache.writes.beginRead("A")
        try cache.setValue(bytes(20, seed: 3), forKey: "A")
        #expect(!cache.writes.promote(token) {})
        #expect(cache.memory.value(forKey: "A") == bytes(20, seed: 3))
        // Removed, or everything removed, meanwhile: dropped.
        token = cache.writes.beginRead("A")
        try cache.removeValue(forKey: "A")
        #expect(!cache.writes.promote(token) {})
        token = cache.writes.beginRead("X")
        try cache.removeAll()
        #expect(!cache.writes.promote(token) {})
        // A background write of the key is a change too.
        token = cache.writes.beginRead("A")
        try cache.setValue(bytes(5), forKey: "A", diskWrite: .background)
        #expect(!cache.writes.promote(token) {})
        try cache.waitForBackgroundWrites()
    }

    /// A read that begins while `removeAll` runs (here, from its progress callback, after
    /// memory was emptied and while the disk is being emptied) may have read a value the
    /// removal is about to delete: its promotion is dropped. One that begins after promotes.
    @Test func aReadBegunDuringRemoveAllPromotesNothing() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try Self.cacheWithAOnDiskOnly(fixture)
        let during = MutexBox<WriteCoordinator.ReadToken?>(nil)
        try cache.removeAll { _, _ in
            during.withLock { if $0 == nil { $0 = cache.writes.beginRead("A") } }
        }
        let token = try #require(during.withLock { $0 })
        #expect(!cache.writes.promote(token) {})
        #expect(cache.writes.promote(cache.writes.beginRead("A")) {})
    }

    @Test func manyThreadsReadingAndWritingKeepEveryKeyConsistent() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make { $0.memory.countLimit = 8 }
        let keys = (0..<16).map { "k\($0)" }
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for round in 0..<300 {
                let key = keys[(thread * 7 + round) % keys.count]
                switch round % 4 {
                case 0: try? cache.setValue(Data("\(key):\(round)".utf8), forKey: key)
                case 1: try? cache.removeValue(forKey: key)
                default:
                    // A value read is always one written for that key.
                    if let value = try? cache.value(forKey: key) {
                        #expect(String(decoding: value, as: UTF8.self).hasPrefix(key + ":"))
                    }
                }
            }
        }
        // Memory and disk agree for every key once the writers are done.
        for key in keys {
            let onDisk = try cache.disk.value(forKey: key)
            if let inMemory = cache.memory.value(forKey: key) { #expect(inMemory == onDisk, "\(key)") }
        }
    }

    @Test func anEvictionCallbackMayWriteAnotherKey() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let box = MutexBox<Cache<Data>?>(nil)
        let cache = try fixture.make {
            $0.memory.countLimit = 1
            $0.memory.policy = .lru
            $0.memory.onEviction = { key, _, _ in
                // Runs once the facade's locks are released: writing another key is fine.
                guard key.hasPrefix("a") else { return }
                try? box.withLock { $0 }?.setValue(Data(key.utf8), forKey: "evicted-\(key)")
            }
        }
        box.withLock { $0 = cache }
        try cache.setValue(bytes(1), forKey: "a1")
        try cache.setValue(bytes(2), forKey: "b1")
        #expect(try cache.value(forKey: "evicted-a1") == Data("a1".utf8))
        box.withLock { $0 = nil }
    }

    @Test func aFailedRemovalChangesNeitherLevel() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        do {
            let cache = try fixture.make()
            try cache.setValue(bytes(10), forKey: "A")
            try cache.close()
        }
        // The disk level refuses the removal: the value stays in both levels.
        let cache = try fixture.make { $0.disk.isReadOnly = true }
        #expect(try cache.value(forKey: "A") == bytes(10))
        #expect(cache.memory.value(forKey: "A") == bytes(10))
        #expect(throws: KVCacheError.self) { try cache.removeValue(forKey: "A") }
        #expect(cache.memory.value(forKey: "A") == bytes(10))
        #expect(try cache.disk.value(forKey: "A") == bytes(10))
    }
}

/// Issue 13: a flush whose commit waits for another process's write lock waits on
/// the commit connection, not under the lock every caller takes (before, a read of
/// another key waited the whole 1.6 s such a commit waited).
@Suite struct ConcurrencyDiskFlushTests {
    @Test func aReadCompletesWhileAFlushWaitsForAnotherWriter() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.busyTimeout = .seconds(60) })
        defer { try? cache.close() }
        try cache.setValue(bytes(100, seed: 1), forKey: "A")
        try cache.flush()
        // Another writer (a connection of its own, as another process has) holds the lock.
        let other = try Database(path: dir.manifestPath, busyTimeout: 0)
        try other.execute("BEGIN IMMEDIATE")
        let flushed = DispatchSemaphore(value: 0)
        let waiting = DispatchSemaphore(value: 0)
        cache.hooks.flushWillWait.withLock { $0 = { waiting.signal() } }
        Thread {
            try? cache.setValue(bytes(100, seed: 2), forKey: "B")
            try? cache.flush()
            flushed.signal()
        }.start()
        // The flush has handed its writes to the commit connection, which now waits.
        _ = waiting.wait(timeout: .now() + ConcurrencyCacheKeyLockTests.stuck)
        let read = ConcurrencyCacheKeyLockTests.BoundedCall { try? cache.value(forKey: "A") }
        let flushWaited = flushed.wait(timeout: .now()) == .timedOut
        try other.execute("COMMIT")
        other.close()
        flushed.wait()
        #expect(read.finishedInTime, "the read of A waited for the flush")
        #expect(flushWaited, "the flush did not wait for the other writer")
        #expect(read.result == .some(bytes(100, seed: 1)))
        #expect(try cache.value(forKey: "B") == bytes(100, seed: 2))
    }

    /// `verify`'s integrity check scans the whole store: it runs on the checkpoint
    /// connection without the store's lock (before: a read waited 244 ms behind it).
    @Test func aReadCompletesWhileVerifyScansTheStore() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        defer { try? cache.close() }
        try cache.setValue(bytes(100, seed: 1), forKey: "A")
        try cache.flush()
        let scanning = DispatchSemaphore(value: 0)
        let finishScan = DispatchSemaphore(value: 0)
        cache.hooks.verifyWillScan.withLock { $0 = { scanning.signal(); finishScan.wait() } }
        let verified = DispatchSemaphore(value: 0)
        let healthy = MutexBox(false)
        Thread {
            let report = try? cache.verify(orphanGracePeriod: .seconds(0))
            healthy.withLock { $0 = report?.isHealthy == true }
            verified.signal()
        }.start()
        #expect(scanning.wait(timeout: .now() + ConcurrencyCacheKeyLockTests.stuck) == .success)
        let read = ConcurrencyCacheKeyLockTests.BoundedCall { try? cache.value(forKey: "A") }
        finishScan.signal()
        verified.wait()
        #expect(read.finishedInTime, "the read of A waited for verify's scan")
        #expect(read.result == .some(bytes(100, seed: 1)))
        #expect(healthy.withLock { $0 })
    }
}
