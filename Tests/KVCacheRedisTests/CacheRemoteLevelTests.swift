import Dispatch
import Foundation
import Testing
@testable import KVCache
@testable import KVCacheRedis

/// Caches in front of one Redis: each a node with its own directory and its own level
/// (its own connections and subscriber), as on separate machines.
final class Node: @unchecked Sendable {
    let directory = TemporaryDirectory("node")
    let level: RedisLevel
    let cache: Cache<Data>

    convenience init(namespace: String, address: RedisAddress? = nil,
         configureLevel: (inout RedisLevel.Configuration) -> Void = { _ in },
         configure: (inout Cache<Data>.Configuration) -> Void = { _ in }) throws {
        try self.init(level: RedisTestServer.level(namespace: namespace, address: address, configureLevel),
                      configure: configure)
    }

    init(level: RedisLevel, configure: (inout Cache<Data>.Configuration) -> Void = { _ in }) throws {
        self.level = level
        var configuration = Cache<Data>.Configuration()
        configuration.disk.autoTrimInterval = nil
        configuration.remote = level
        configure(&configuration)
        cache = try Cache(directory: directory.url, coder: DataCoder(), configuration: configuration)
    }

    deinit {
        try? cache.close()
        directory.remove()
    }

    /// Waits until this node has applied `count` changes other nodes published.
    func waitForChanges(_ count: Int) -> Bool {
        level.waitForStatistics(timeout: .seconds(10)) { $0.changesReceived >= count }
    }
}

@Suite(.enabled(if: RedisTestServer.url != nil, RedisTestServer.skipReason))
struct CacheRemoteLevelTests {
    @Test func aValueSetOnOneNodeIsReadOnAnotherAndStoredThereWithItsExpiration() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try Node(namespace: namespace)
        let b = try Node(namespace: namespace)
        let deadline = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 600).rounded(.up))
        try a.cache.setValue(bytes(1000), forKey: "k", expiration: .at(deadline))
        // Else a's invalidation could arrive after b's read and drop what b just stored.
        #expect(b.waitForChanges(1))
        let read = try b.cache.result(forKey: "k")
        #expect(read.source == .remote && read.value == bytes(1000))
        #expect(try b.cache.result(forKey: "k").source == .memory)
        #expect(try b.cache.disk.value(forKey: "k") == bytes(1000))
        #expect(try b.cache.expiration(forKey: "k") == .at(deadline))
        #expect(try b.cache.disk.info(forKey: "k")?.expirationDate == deadline)
        #expect(b.cache.statistics.remoteHits == 1)
        #expect(try b.cache.result(forKey: "absent").source == .none)
        #expect(b.cache.statistics.misses == 1)
    }

    @Test func aChangeOnOneNodeDropsTheOtherNodesCopies() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try Node(namespace: namespace)
        let b = try Node(namespace: namespace)
        try a.cache.setValue(bytes(10, seed: 1), forKey: "k")
        #expect(b.waitForChanges(1))
        #expect(try b.cache.value(forKey: "k") == bytes(10, seed: 1))
        #expect(b.cache.memory.contains("k"))
        try a.cache.setValue(bytes(10, seed: 2), forKey: "k")
        #expect(b.waitForChanges(2))
        #expect(!b.cache.memory.contains("k"))
        #expect(try !b.cache.disk.contains("k"))
        #expect(try b.cache.result(forKey: "k").value == bytes(10, seed: 2))
        try a.cache.removeValue(forKey: "k")
        #expect(b.waitForChanges(3))
        #expect(try b.cache.value(forKey: "k") == nil)
        // A node's own changes are not applied back to it.
        #expect(a.level.statistics.changesReceived == 0)
        #expect(try a.cache.value(forKey: "k") == nil)
    }

    /// Issue 38 (4): a read that fetched the old value from Redis just before another node's
    /// write, paused before it stores that value locally while the write's invalidation is
    /// applied, stores nothing (the key's generation changed since the read began), so no
    /// later read returns the old value. The read in flight itself may return it: it began
    /// before the write was acknowledged.
    @Test func aRemoteValueReadBeforeAnInvalidationIsNotStoredAfterIt() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try Node(namespace: namespace)
        let b = try Node(namespace: namespace)
        try a.cache.setValue(bytes(10, seed: 1), forKey: "k")
        #expect(b.waitForChanges(1))
        let fetched = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        // Between the Redis fetch and the promotion into memory and onto disk.
        b.cache.writes.willPromote = { key in
            guard key == "k" else { return }
            fetched.signal()
            resume.wait()
        }
        let read = MutexBox<CacheResult<Data>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            read.withLock { $0 = try? b.cache.result(forKey: "k") }
            finished.signal()
        }.start()
        #expect(fetched.wait(timeout: .now() + 30) == .success)
        b.cache.writes.willPromote = nil
        try a.cache.setValue(bytes(10, seed: 2), forKey: "k")
        #expect(b.waitForChanges(2))
        resume.signal()
        finished.wait()
        let inFlight = try #require(read.withLock { $0 })
        #expect(inFlight.source == .remote && inFlight.value == bytes(10, seed: 1))
        #expect(!b.cache.memory.contains("k"))
        #expect(try !b.cache.disk.contains("k"))
        let after = try b.cache.result(forKey: "k")
        #expect(after.source == .remote && after.value == bytes(10, seed: 2))
    }

    /// Issue 38 (4), the race the staleness measurement found (`KVCacheRedisTestWorker
    /// staleness`): a read that begins while another node's invalidation is being applied
    /// (memory already dropped, disk not yet) reads the old value from disk; its promotion
    /// must not put it back in memory once the invalidation is done. Before, the key's
    /// generation was bumped only when the invalidation's mutation began, the promotion went
    /// through, and the node served the old value from memory until the key changed again.
    @Test func aReadBegunWhileAnInvalidationIsAppliedDoesNotStoreTheOldValue() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try Node(namespace: namespace)
        let b = try Node(namespace: namespace)
        try a.cache.setValue(bytes(10, seed: 1), forKey: "k")
        #expect(b.waitForChanges(1))
        #expect(try b.cache.result(forKey: "k").source == .remote)
        b.cache.memory.removeValue(forKey: "k")  // on b's disk only
        let applying = DispatchSemaphore(value: 0)
        let finishApplying = DispatchSemaphore(value: 0)
        // The invalidation's mutation of "k" on b's subscriber thread, paused before its body.
        b.cache.writes.duringMutation = { key in
            guard key == "k" else { return }
            applying.signal()
            finishApplying.wait()
        }
        try a.cache.setValue(bytes(10, seed: 2), forKey: "k")
        #expect(applying.wait(timeout: .now() + 30) == .success)
        b.cache.writes.duringMutation = nil
        let readFromDisk = DispatchSemaphore(value: 0)
        b.cache.writes.willPromote = { key in if key == "k" { readFromDisk.signal() } }
        let read = MutexBox<CacheResult<Data>?>(nil)
        let readDone = DispatchSemaphore(value: 0)
        Thread {
            read.withLock { $0 = try? b.cache.result(forKey: "k") }
            readDone.signal()
        }.start()
        #expect(readFromDisk.wait(timeout: .now() + 30) == .success)
        b.cache.writes.willPromote = nil
        finishApplying.signal()
        #expect(b.waitForChanges(2))
        readDone.wait()
        // Concurrent with the invalidation, the read may return the old value...
        #expect(read.withLock { $0 }?.source == .disk)
        // ...but b keeps no copy of it: its next read asks Redis.
        #expect(!b.cache.memory.contains("k"))
        let after = try b.cache.result(forKey: "k")
        #expect(after.source == .remote && after.value == bytes(10, seed: 2))
    }

    @Test func removingByPrefixAndEverythingReachesTheRemoteLevelAndTheOtherNodes() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try Node(namespace: namespace)
        let b = try Node(namespace: namespace)
        for key in ["user:1", "user:2", "item:1"] { try a.cache.setValue(bytes(5), forKey: key) }
        #expect(b.waitForChanges(3))
        for key in ["user:1", "user:2", "item:1"] { #expect(try b.cache.value(forKey: key) != nil) }
        try a.cache.removeValues(withPrefix: "user:")
        #expect(b.waitForChanges(4))
        #expect(try b.cache.value(forKey: "user:1") == nil && b.cache.value(forKey: "user:2") == nil)
        #expect(try b.cache.value(forKey: "item:1") != nil)
        try a.cache.removeAll()
        #expect(b.waitForChanges(5))
        #expect(try b.cache.value(forKey: "item:1") == nil)
        #expect(try a.level.entry(forKey: "item:1") == nil)
    }

    @Test func aValueTooLargeForTheRemoteLevelStaysLocalAndTheOlderRemoteValueGoes() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try Node(namespace: namespace, configureLevel: { $0.maxValueSize = 1000 })
        try a.cache.setValue(bytes(1000, seed: 1), forKey: "k")
        #expect(try a.level.entry(forKey: "k") != nil)
        try a.cache.setValue(bytes(1001, seed: 2), forKey: "k")
        #expect(try a.cache.value(forKey: "k") == bytes(1001, seed: 2))
        #expect(try a.level.entry(forKey: "k") == nil)
        #expect(a.cache.statistics.remoteValuesTooLarge == 1)
        #expect(a.cache.statistics.remoteErrors == 0)
    }

    /// Another program's bytes under a key, or a key of another type: a miss and a counted
    /// error, and the rest of the cache unaffected.
    @Test func garbageInRedisIsAMissAndACountedError() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try Node(namespace: namespace)
        let raw = try RedisTestServer.raw()
        try raw.run("SET", "kvcache:\(namespace):plain", "not a KVCache value")
        try raw.run("HSET", "kvcache:\(namespace):hash", "f", "v")
        try a.cache.setValue(bytes(3), forKey: "good")
        #expect(try a.cache.value(forKey: "plain") == nil)
        #expect(try a.cache.value(forKey: "hash") == nil)
        #expect(try a.cache.value(forKey: "good") == bytes(3))
        #expect(a.cache.statistics.remoteErrors == 2)
        #expect(a.cache.statistics.misses == 2)
    }

    /// A value another node's coder wrote in a form this one cannot decode: a miss.
    @Test func aRemoteValueThatDoesNotDecodeIsAMiss() throws {
        struct Point: Codable, Equatable { var x: Int }
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try Node(namespace: namespace)
        try a.cache.setValue(Data("not json".utf8), forKey: "p")
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var configuration = Cache<Point>.Configuration()
        configuration.remote = try RedisTestServer.level(namespace: namespace)
        let typed = try Cache<Point>(directory: directory.url, coder: JSONCoder(), configuration: configuration)
        defer { try? typed.close() }
        #expect(try typed.value(forKey: "p") == nil)
        #expect(typed.statistics.remoteErrors == 1)
    }

    @Test func backgroundRemoteWritesLandInCallOrder() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try Node(namespace: namespace, configure: { $0.remoteWrite = .background })
        for seed in 0..<50 { try a.cache.setValue(bytes(10, seed: UInt8(seed)), forKey: "k") }
        try a.cache.waitForBackgroundWrites()
        #expect(try a.level.entry(forKey: "k")?.data == bytes(10, seed: 49))
    }

    @Test func aValueLoadedOnOneNodeIsNotComputedAgainOnAnother() async throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try Node(namespace: namespace)
        let b = try Node(namespace: namespace)
        _ = try await a.cache.value(forKey: "k", orCompute: { bytes(7) })
        #expect(b.waitForChanges(1))
        let value = try await b.cache.value(forKey: "k", orCompute: { Issue.record("computed again"); return Data() })
        #expect(value == bytes(7))
        #expect(b.cache.statistics.computations == 0)
    }

    @Test func touchingAValueRetimesTheRemoteCopy() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try Node(namespace: namespace)
        try a.cache.setValue(bytes(3), forKey: "k", expiration: .after(.seconds(30)))
        try a.cache.touch("k", expiration: .never)
        #expect(try a.level.entry(forKey: "k")?.expiration == .never)
        #expect(try RedisTestServer.raw().run("PTTL", "kvcache:\(namespace):k") == .integer(-1))
    }

    /// A batch read takes what memory and disk hold, and the rest from Redis in one call,
    /// stored locally like single reads' remote hits.
    @Test func aBatchReadsWhatNoLocalLevelHoldsInOneRemoteCall() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try Node(namespace: namespace)
        let b = try Node(namespace: namespace)
        let keys = (0..<100).map { "k\($0)" }
        for (index, key) in keys.enumerated() { try a.cache.setValue(bytes(50, seed: UInt8(index)), forKey: key) }
        #expect(b.waitForChanges(keys.count))
        try b.cache.setValue(bytes(7), forKey: "k0")  // in b's memory
        try b.cache.disk.setValue(bytes(8), forKey: "k1")  // on b's disk only
        let before = b.level.statistics
        let found = try b.cache.values(forKeys: keys + ["missing", "k2"])
        #expect(b.level.statistics.calls == before.calls + 1)
        #expect(b.level.statistics.roundTrips == before.roundTrips + 1)
        #expect(found.count == 100)
        #expect(found["k0"] == bytes(7) && found["k1"] == bytes(8) && found["k99"] == bytes(50, seed: 99))
        #expect(b.cache.statistics.remoteHits == 98)
        #expect(try b.cache.result(forKey: "k50").source == .memory)
        #expect(try b.cache.disk.value(forKey: "k50") == bytes(50, seed: 50))
    }
}
