import Foundation
import Testing
@testable import KVCache

struct CacheBasicTests {
    @Test func aValueSetIsReadFromMemory() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()

        try cache.setValue(bytes(100), forKey: "a")

        #expect(try cache.result(forKey: "a").source == .memory)
        #expect(try cache.value(forKey: "a") == bytes(100))
        #expect(try cache.disk.value(forKey: "a") == bytes(100))
    }

    @Test func aDiskHitIsPromotedIntoMemoryWithItsSize() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        try cache.setValue(bytes(30_000), forKey: "big")
        cache.memory.removeAll()

        let first = try cache.result(forKey: "big")
        let second = try cache.result(forKey: "big")

        #expect(first.source == .disk)
        #expect(first.value == bytes(30_000))
        #expect(second.source == .memory)
        #expect(cache.memory.totalCost == 30_000)
    }

    @Test func aMissReportsNoSource() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()

        let result = try cache.result(forKey: "nothing")

        #expect(result.source == .none)
        #expect(result.value == nil)
    }

    @Test func removeValueRemovesFromBothLevels() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        try cache.setValue(bytes(10), forKey: "a")
        try cache.setValue(bytes(10), forKey: "b")

        try cache.removeValue(forKey: "a")

        #expect(!cache.memory.contains("a"))
        #expect(try !cache.disk.contains("a"))
        #expect(try !cache.contains("a"))
        #expect(try cache.contains("b"))
    }

    @Test func containsSeesEitherLevelWithoutCountingARead() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        try cache.setValue(bytes(10), forKey: "both")
        try cache.disk.setValue(bytes(10), forKey: "diskOnly")

        #expect(try cache.contains("both"))
        #expect(try cache.contains("diskOnly"))
        #expect(try !cache.contains("neither"))
        #expect(cache.statistics.hits + cache.statistics.misses == 0)
        #expect(!cache.memory.contains("diskOnly"))
    }

    @Test func removeAllEmptiesBothLevelsAndReportsProgress() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        for index in 0..<600 { try cache.setValue(bytes(10), forKey: "key\(index)") }
        var reports: [Int] = []

        try cache.removeAll { removed, total in
            #expect(total == 600)
            reports.append(removed)
        }

        #expect(reports.first == 0)
        #expect(reports.last == 600)
        #expect(cache.memory.count == 0)
        #expect(try cache.disk.totalCount == 0)
        #expect(try cache.value(forKey: "key1") == nil)
    }

    @Test func extendedDataIsKeptBesideTheValueOnDisk() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()

        try cache.setValue(bytes(10), forKey: "a", extendedData: Data("meta".utf8))

        #expect(try cache.extendedData(forKey: "a") == Data("meta".utf8))
        #expect(try cache.extendedData(forKey: "missing") == nil)
    }

    @Test func invalidKeysAreRejectedBeforeEitherLevelChanges() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make { $0.disk.maxKeyLength = 8 }

        #expect(throws: KVCacheError.self) { try cache.setValue(bytes(1), forKey: "") }
        #expect(throws: KVCacheError.self) { try cache.setValue(bytes(1), forKey: "123456789", diskWrite: .skipped) }
        #expect(cache.memory.count == 0)
    }

    @Test func asyncVariantsReadAndWriteLikeTheSyncOnes() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()

        try await cache.setValue(bytes(10), forKey: "a")
        cache.memory.removeAll()

        #expect(try await cache.result(forKey: "a").source == .disk)
        #expect(try await cache.value(forKey: "a") == bytes(10))
        #expect(try await cache.contains("a"))
        try await cache.removeValue(forKey: "a")
        #expect(try await cache.value(forKey: "a") == nil)
    }

    @Test func dataCachesStoreBytesUntouched() throws {
        let base = TemporaryDirectory()
        defer { base.remove() }
        let cache = try Cache<Data>(directory: base.url)

        try cache.setValue(bytes(50), forKey: "raw")

        #expect(cache.coder is DataCoder)
        #expect(try cache.disk.value(forKey: "raw") == bytes(50))
    }

    @Test func theMemoryLevelUsesTheConfiguredPolicy() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let adaptive = try fixture.make { $0.memory.countLimit = 100 }
        #expect(adaptive.memory.cache.isAdaptive)
        try adaptive.close()
        let lru = try fixture.make {
            $0.memory.countLimit = 100
            $0.memory.policy = .lru
        }
        #expect(!lru.memory.cache.isAdaptive)
    }
}
