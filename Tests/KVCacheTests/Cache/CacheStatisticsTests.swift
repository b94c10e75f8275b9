import Dispatch
import Foundation
import Testing
@testable import KVCache

struct CacheStatisticsTests {
    @Test func statisticsCountEveryLevelExactlyInAScriptedScenario() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()

        try await cache.setValue(bytes(100), forKey: "a")
        try await cache.setValue(bytes(30_000), forKey: "b")
        try await cache.setValue(bytes(50), forKey: "c", diskWrite: .skipped)
        _ = try await cache.value(forKey: "a")                  // memory hit; LRU order now a, c, b
        try cache.memory.trim(toCount: 1)                     // evicts b and c by count
        _ = try await cache.value(forKey: "b")                  // disk hit, promoted
        _ = try await cache.value(forKey: "c")                  // miss: c lived in memory only
        _ = try await cache.value(forKey: "zzz")                // miss
        // Committed, so that b's set below replaces a stored row (statistics do not commit).
        try await cache.flush()

        let middle = cache.statistics
        #expect(middle.disk.count == 2)
        #expect(middle.disk.fileCount == 1)
        #expect(middle.disk.fileSize == 30_000)
        #expect(middle.disk.inlineCount == 1)
        #expect(middle.disk.inlineSize == 100)

        try await cache.removeValue(forKey: "a")                // removed from both levels
        try await cache.setValue(bytes(100), forKey: "b")       // replaces b in both levels
        _ = try await cache.value(forKey: "d") { bytes(10) }  // miss, computed, stored
        _ = try await cache.value(forKey: "d") { bytes(10) }  // memory hit
        // The disk level counts a replacement when its commit lands; statistics do not commit.
        try await cache.flush()

        let statistics = cache.statistics
        #expect(statistics.memoryHits == 2)
        #expect(statistics.diskHits == 1)
        #expect(statistics.misses == 3)
        #expect(statistics.hits == 3)
        #expect(statistics.hitRatio == 0.5)
        #expect(statistics.sets == 5)
        #expect(statistics.computations == 1)
        #expect(statistics.joinedLoads == 0)
        #expect(statistics.decodingFailures == 0)
        #expect(statistics.failedBackgroundWrites == 0)

        #expect(statistics.memory.hits == 2)
        #expect(statistics.memory.misses == 5)  // b, c, zzz, and d twice (before and inside the load)
        #expect(statistics.memory.sets == 6)
        #expect(statistics.memory.evictions[.count] == 2)
        #expect(statistics.memory.evictions[.removed] == 1)
        #expect(statistics.memory.evictions[.replaced] == 1)
        #expect(statistics.memory.count == 2)
        #expect(statistics.memory.totalCost == 110)

        #expect(statistics.disk.hits == 1)
        #expect(statistics.disk.misses == 3)
        #expect(statistics.disk.sets == 4)
        #expect(statistics.disk.evictions[.removed] == 1)
        // One vocabulary, and a readable description, for both levels and the cache.
        #expect(statistics.memory.description
            == "2 entries, cost 110; 2 hits, 5 misses (28.6 %), 6 sets; evicted: 2 count, 1 removed, 1 replaced")
        #expect(statistics.disk.description
            == "2 entries, 110 bytes (0 in files); 1 hit, 3 misses (25.0 %), 4 sets; evicted: 1 removed, 1 replaced")
        #expect(statistics.description == """
            3 hits (2 memory, 1 disk), 3 misses (hit ratio 50.0 %), 5 sets, 1 computation
            memory: \(statistics.memory)
            disk: \(statistics.disk)
            """)
        #expect(statistics.disk.evictions[.replaced] == 1)
        #expect(statistics.disk.count == 2)
        #expect(statistics.disk.size == 110)
        #expect(statistics.disk.fileCount == 0)
        #expect(statistics.disk.inlineCount == 2)
    }

    @Test func backgroundWritesAndUndecodableValuesAreCounted() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make(coder: JSONCoder<Profile>())
        try cache.disk.setValue(Data("{".utf8), forKey: "bad")

        _ = try? cache.value(forKey: "bad")
        try cache.setValue(Profile(name: "A", age: 1), forKey: "a", diskWrite: .background)
        try cache.waitForBackgroundWrites()

        let statistics = cache.statistics
        #expect(statistics.decodingFailures == 1)
        #expect(statistics.sets == 1)
        #expect(statistics.misses == 0)
        #expect(statistics.disk.sets == 2)
        #expect(statistics.disk.count == 1)
    }

    /// `flush(durability: .committed)`, sync and async, commits the disk level (another
    /// connection sees the row) without the fsyncs of `.synced`. (A sync test that waited
    /// for a task here held one of the pool's two threads while the task queued behind
    /// every other test: a minute and more in a full parallel run.)
    @Test(arguments: [false, true]) func flushTakesADurability(async: Bool) async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make { $0.disk.groupCommitDelay = .seconds(3600) }
        defer { try? cache.close() }
        let manifest = fixture.base.path + "/test/manifest.sqlite"
        let rows = "SELECT count(*) FROM manifest WHERE key = 'a'"
        try await cache.setValue(bytes(100), forKey: "a")
        #expect(try rawRows(manifest, rows) == [["0"]])
        if async {
            try await cache.flush(durability: .committed)
        } else {
            // A closure that is not async calls the sync variant.
            let flush: () throws -> Void = { try cache.flush(durability: .committed) }
            try flush()
        }
        #expect(try rawRows(manifest, rows) == [["1"]])
    }
}
