import Foundation
import Testing
@testable import KVCache

/// `setValues(_:expiration:)` (one transaction) and `values(forKeys:)`, on the disk
/// level and through the facade.
@Suite struct CacheBatchTests {
    @Test func theDiskLevelStoresABatchInOneCommit() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(3600) })
        defer { try? cache.close() }
        try cache.setValue(bytes(30_000, seed: 1), forKey: "big")  // replaced below: its file goes
        try cache.setValue(bytes(10, seed: 1), forKey: "kept")
        try cache.flush()
        let commits = cache.statistics.commits
        var batch: [String: Data] = ["big": bytes(40_000, seed: 2), "new file": bytes(25_000, seed: 3)]
        for index in 0..<100 { batch["k\(index)"] = bytes(10, seed: UInt8(index)) }
        try cache.setValues(batch, expiration: .after(.seconds(3600)))
        // Committed when it returns, in one transaction with nothing else.
        #expect(cache.statistics.commits == commits + 1 && cache.statistics.sets == 2 + 102)
        #expect(try rawRows(dir.manifestPath, "SELECT count(*) FROM manifest") == [["103"]])
        #expect(try cache.values(forKeys: ["big", "new file", "k7", "kept", "absent", "k7"])
            == ["big": bytes(40_000, seed: 2), "new file": bytes(25_000, seed: 3), "k7": bytes(10, seed: 7),
                "kept": bytes(10, seed: 1)])
        #expect(try cache.info(forKey: "k1")?.expirationDate != nil)
        #expect(dir.dataFiles().count == 2)  // the replaced file is gone
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
        try cache.setValues([:])
        #expect(try cache.values(forKeys: []) == [:])
    }

    @Test func aBadKeyStoresNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        defer { try? cache.close() }
        #expect {
            try cache.setValues(["fine": bytes(30_000), "": bytes(10)])
        } throws: { ($0 as? KVCacheError)?.code == .invalidKey }
        #expect(try cache.totalCount == 0 && dir.dataFiles().isEmpty)
        try cache.close()
        #expect(throws: KVCacheError.closed) { try cache.setValues(["a": bytes(30_000)]) }
        #expect(dir.dataFiles().isEmpty)
    }

    @Test func aReadOnlyDiskLevelStoresNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try DiskCache(directory: dir.url, configuration: .testing()).close()
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.isReadOnly = true })
        defer { try? cache.close() }
        #expect {
            try cache.setValues(["a": bytes(30_000), "b": bytes(1)])
        } throws: { ($0 as? KVCacheError)?.code == .readOnly }
        #expect(dir.dataFiles().isEmpty)
    }

    @Test func theFacadeStoresABatchInBothLevels() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        defer { try? cache.close() }
        try await cache.setValue(bytes(10, seed: 9), forKey: "b", diskWrite: .background)  // superseded by the batch
        try await cache.setValues(["a": bytes(10, seed: 1), "b": bytes(30_000, seed: 2)])
        try await cache.waitForBackgroundWrites()
        #expect(cache.memory.value(forKey: "a") == bytes(10, seed: 1))
        #expect(try await cache.disk.value(forKey: "b") == bytes(30_000, seed: 2))
        cache.memory.removeAll()
        #expect(try await cache.values(forKeys: ["a", "b", "c"]) == ["a": bytes(10, seed: 1), "b": bytes(30_000, seed: 2)])
        #expect(cache.statistics.sets == 3)
    }

    @Test func anEncodingFailureStoresNothing() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make(coder: JSONCoder<Double>())
        defer { try? cache.close() }
        #expect {
            try cache.setValues(["a": 1, "b": .nan])
        } throws: { ($0 as? KVCacheError)?.code == .encodingFailed }
        #expect(cache.memory.value(forKey: "a") == nil)
        #expect(try cache.disk.value(forKey: "a") == nil)
    }
}

/// `setValueIfAbsent` (python-diskcache's `add`) on the disk level and through the facade.
@Suite struct CacheSetIfAbsentTests {
    @Test func theDiskLevelStoresOnlyWhereNoLiveValueIs() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.clock = clock.function })
        defer { try? cache.close() }
        #expect(try cache.setValueIfAbsent(bytes(10, seed: 1), forKey: "a"))
        #expect(try !cache.setValueIfAbsent(bytes(10, seed: 2), forKey: "a"))  // pending
        try cache.flush()
        #expect(try !cache.setValueIfAbsent(bytes(30_000, seed: 2), forKey: "a"))  // committed; file value
        #expect(try cache.value(forKey: "a") == bytes(10, seed: 1) && dir.dataFiles().isEmpty)
        try cache.setValue(bytes(10), forKey: "short", expiration: .after(.seconds(5)))
        clock.advance(by: 10)
        #expect(try cache.setValueIfAbsent(bytes(30_000, seed: 3), forKey: "short"))  // expired: replaced
        #expect(try cache.value(forKey: "short") == bytes(30_000, seed: 3))
        try cache.removeValue(forKey: "a")
        #expect(try cache.setValueIfAbsent(bytes(10, seed: 4), forKey: "a"))
        try cache.flush()
        #expect(try cache.value(forKey: "a") == bytes(10, seed: 4) && dir.dataFiles().count == 1)
        #expect(cache.statistics.sets == 4)
        #expect { try cache.setValueIfAbsent(bytes(1), forKey: "") } throws: { ($0 as? KVCacheError)?.code == .invalidKey }
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
    }

    @Test func theFacadeCountsEitherLevelAndAQueuedWriteAsPresent() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        defer { try? cache.close() }
        try cache.setValue(bytes(10, seed: 1), forKey: "memory only", diskWrite: .skipped)
        try cache.setValue(bytes(10, seed: 2), forKey: "queued", diskWrite: .background)
        try cache.setValue(bytes(10, seed: 3), forKey: "disk only")
        cache.memory.removeValue(forKey: "disk only")
        for key in ["memory only", "queued", "disk only"] {
            #expect(try !cache.setValueIfAbsent(bytes(10, seed: 9), forKey: key), "\(key)")
        }
        try cache.waitForBackgroundWrites()
        #expect(try cache.disk.value(forKey: "queued") == bytes(10, seed: 2))  // the queued write still landed
        #expect(try cache.value(forKey: "disk only") == bytes(10, seed: 3))
        #expect(try cache.setValueIfAbsent(bytes(10, seed: 4), forKey: "new"))
        #expect(cache.memory.value(forKey: "new") == bytes(10, seed: 4))
        #expect(try cache.disk.value(forKey: "new") == bytes(10, seed: 4))
    }

    @Test func concurrencyOneOfManyCallersStores() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        defer { try? cache.close() }
        let stored = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<16 {
                group.addTask { try await cache.setValueIfAbsent(bytes(10, seed: UInt8(index)), forKey: "k") }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(stored == 1)
        let value = try #require(try await cache.value(forKey: "k"))
        #expect(try await cache.disk.value(forKey: "k") == value)
    }
}

/// `touch(_:expiration:)`: a new expiration for a live entry, on each level and through the facade.
@Suite struct CacheTouchTests {
    @Test func theDiskLevelMovesTheExpirationOfALiveEntryOnly() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.clock = clock.function })
        defer { try? cache.close() }
        try cache.setValue(bytes(10), forKey: "a", expiration: .after(.seconds(10)))
        try cache.flush()
        try cache.setValue(bytes(10), forKey: "pending", expiration: .after(.seconds(10)))
        try cache.setValue(bytes(10), forKey: "short", expiration: .after(.seconds(1)))
        clock.advance(by: 5)
        #expect(try cache.touch("a", expiration: .after(.seconds(100))))
        #expect(try cache.touch("pending", expiration: .never))
        #expect(try !cache.touch("short", expiration: .after(.seconds(100))))  // expired already
        #expect(try !cache.touch("missing", expiration: .after(.seconds(100))))
        #expect(try cache.info(forKey: "a")?.expirationDate == Date(timeIntervalSince1970: clock.wall + 100))
        #expect(try cache.info(forKey: "pending")?.expirationDate == nil)
        clock.advance(by: 50)
        #expect(try cache.value(forKey: "a") == bytes(10) && cache.value(forKey: "pending") == bytes(10))
        #expect(try cache.touch("a", expiration: .after(.seconds(0))))  // expires it now
        #expect(try cache.value(forKey: "a") == nil)
    }

    @Test func theMemoryLevelMovesTheExpiration() throws {
        let clock = ManualClock()
        let cache = try MemoryCache<String, Int>(configuration: .init(autoTrimInterval: nil), clock: CacheClock(manual: clock))
        cache.setValue(1, forKey: "a", expiration: .after(.seconds(10)))
        #expect(cache.touch("a", expiration: .after(.seconds(100))))
        #expect(!cache.touch("b", expiration: .after(.seconds(100))))
        clock.advance(by: 50)
        #expect(cache.value(forKey: "a") == 1)
        clock.advance(by: 60)
        #expect(cache.value(forKey: "a") == nil)
        #expect(!cache.touch("a", expiration: .never))
        // From never to a deadline and back: reads check deadlines only while some entry has one.
        cache.setValue(2, forKey: "c")
        cache.setValue(3, forKey: "d", expiration: .after(.seconds(10)))
        #expect(cache.touch("c", expiration: .after(.seconds(5))) && cache.touch("d", expiration: .never))
        clock.advance(by: 20)
        #expect(cache.value(forKey: "c") == nil && cache.value(forKey: "d") == 3)
    }

    @Test func theFacadeMovesItInBothLevelsAndInAQueuedWrite() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        defer { try? cache.close() }
        try cache.setValue(bytes(10, seed: 1), forKey: "both")
        try cache.setValue(bytes(10, seed: 2), forKey: "queued", diskWrite: .background)
        #expect(try cache.touch("both", expiration: .after(.seconds(10))))
        #expect(try cache.touch("queued", expiration: .after(.seconds(10))))
        #expect(try !cache.touch("none", expiration: .after(.seconds(10))))
        try cache.waitForBackgroundWrites()
        #expect(try cache.disk.info(forKey: "queued")?.expirationDate != nil)
        fixture.clock.advance(by: 20)
        for key in ["both", "queued"] {
            #expect(cache.memory.value(forKey: key) == nil, "\(key)")
            #expect(try cache.disk.value(forKey: key) == nil, "\(key)")
        }
    }
}
