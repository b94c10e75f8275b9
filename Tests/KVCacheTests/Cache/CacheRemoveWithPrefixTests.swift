import Dispatch
import Foundation
import Testing
@testable import KVCache

/// `removeValues(withPrefix:)` on each level and through the facade.
@Suite struct CacheRemoveWithPrefixTests {
    @Test func theDiskLevelRemovesOneKeyRangeInStepsCommittedAndPendingAlike() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(3600) })
        defer { try? cache.close() }
        // More than one step (4,096 rows) of the prefix, around keys that sort beside it.
        for index in 0..<5_000 { try cache.setValue(bytes(10), forKey: "p/\(index)") }
        for key in ["p", "p.", "p0", "o/9", "q/1"] { try cache.setValue(bytes(10), forKey: key) }
        try cache.setValue(bytes(30_000), forKey: "p/file")
        try cache.flush()
        try cache.setValue(bytes(30_000), forKey: "p/pending-file")  // pending
        try cache.setValue(bytes(10), forKey: "p/0")                  // pending replacement
        #expect(try cache.removeValues(withPrefix: "p/") == 5_002)
        #expect(try cache.keys(limit: 100) == ["o/9", "p", "p.", "p0", "q/1"])
        #expect(try cache.value(forKey: "p/0") == nil && cache.statistics.evictions[.removed] == 5_002)
        try cache.flush()
        #expect(try cache.totalCount == 5 && dir.dataFiles().isEmpty)
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
        #expect(try cache.removeValues(withPrefix: "nothing") == 0)
        #expect(try cache.removeValues(withPrefix: "") == 5)
        #expect(try cache.totalCount == 0)
    }

    @Test func aReadOnlyDiskLevelRefuses() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try DiskCache(directory: dir.url, configuration: .testing()).close()
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.isReadOnly = true })
        defer { try? cache.close() }
        #expect(throws: KVCacheError.self) { try cache.removeValues(withPrefix: "a") }
    }

    @Test func theMemoryLevelRemovesTheKeysAPredicatePicks() throws {
        let removed = MutexBox<[String]>([])
        var configuration = MemoryCache<String, Int>.Configuration(autoTrimInterval: nil)
        configuration.releasesValuesInBackground = false
        configuration.onEviction = { key, _, reason in
            if reason == .removed { removed.withLock { $0.append(key) } }
        }
        let cache = try MemoryCache<String, Int>(configuration: configuration)
        for key in ["a/1", "a/2", "b/1", "a"] { cache.setValue(1, forKey: key) }
        #expect(cache.removeValues { $0.hasPrefix("a/") } == 2)
        #expect(removed.withLock { $0.sorted() } == ["a/1", "a/2"])
        #expect(cache.count == 2 && cache.value(forKey: "a") == 1 && cache.value(forKey: "b/1") == 1)
        #expect(cache.removeValues { _ in false } == 0)
    }

    @Test func theFacadeRemovesFromBothLevelsAndDropsQueuedWritesOfThePrefix() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        defer { try? cache.close() }
        try cache.setValue(bytes(10), forKey: "user:1")
        try cache.setValue(bytes(10), forKey: "user:2", diskWrite: .skipped)  // memory only
        try cache.setValue(bytes(10), forKey: "team:1")
        try cache.setValue(bytes(10), forKey: "user:3", diskWrite: .background)
        try cache.setValue(bytes(10), forKey: "team:2", diskWrite: .background)
        #expect(try cache.removeValues(withPrefix: "user:") >= 1)
        try cache.waitForBackgroundWrites()
        for key in ["user:1", "user:2", "user:3"] {
            #expect(try cache.value(forKey: key) == nil, "\(key)")
            #expect(try cache.disk.value(forKey: key) == nil, "\(key)")
        }
        #expect(try cache.value(forKey: "team:1") == bytes(10))
        #expect(try cache.disk.value(forKey: "team:2") == bytes(10))
    }

    /// A read that found a key on disk before the removal promotes nothing after it: the
    /// key does not come back into memory (the promotion is dropped).
    @Test func aPromotionReadBeforeTheRemovalIsDropped() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        defer { try? cache.close() }
        try cache.setValue(bytes(10), forKey: "p/1")
        cache.memory.removeValue(forKey: "p/1")  // on disk only: a read promotes it
        let reached = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        cache.writes.willPromote = { key in
            guard key == "p/1" else { return }
            reached.signal()
            resume.wait()
        }
        let read = MutexBox<Data?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            read.withLock { $0 = try? cache.value(forKey: "p/1") }
            finished.signal()
        }.start()
        #expect(reached.wait(timeout: .now() + ConcurrencyCacheKeyLockTests.stuck) == .success)
        cache.writes.willPromote = nil
        // Completes while the read waits to promote: it does not wait for promotions.
        #expect(try cache.removeValues(withPrefix: "p/") == 1)
        resume.signal()
        finished.wait()
        #expect(read.withLock { $0 } == bytes(10))  // the read came first
        #expect(cache.memory.value(forKey: "p/1") == nil)
        #expect(try cache.value(forKey: "p/1") == nil)
    }
}
