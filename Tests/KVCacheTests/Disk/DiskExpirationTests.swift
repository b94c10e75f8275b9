import Foundation
import Testing
@testable import KVCache

@Suite struct DiskExpirationTests {
    @Test func expiredValuesAreMissesAndRemoved() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.clock = clock.function })
        try cache.setValue(bytes(10), forKey: "short", expiration: .after(.seconds(10)))
        try cache.setValue(bytes(30_000), forKey: "file", expiration: .after(.seconds(10)))
        try cache.setValue(bytes(10), forKey: "dated", expiration: .at(Date(timeIntervalSince1970: clock.wall + 100)))
        try cache.setValue(bytes(10), forKey: "forever")
        clock.advance(by: 9)
        #expect(try cache.value(forKey: "short") != nil)
        #expect(try cache.contains("file"))
        clock.advance(by: 2)
        #expect(try cache.value(forKey: "short") == nil)
        #expect(try cache.contains("file") == false)
        #expect(try cache.extendedData(forKey: "file") == nil)
        #expect(try cache.removeExpired() == 1)  // "short" went on access already
        try cache.flush()
        #expect(dir.dataFiles().isEmpty)
        clock.advance(by: 100)
        #expect(try cache.value(forKey: "dated") == nil)
        #expect(try cache.value(forKey: "forever") == bytes(10))
        #expect(try cache.totalCount == 1)  // the queued removal of "dated" counted, not committed
        try cache.flush()  // an expired row's removal counts as an eviction once committed
        #expect(cache.statistics.evictions[.expired] == 3)
    }

    @Test func expirationExtendsOnAccessWhenConfigured() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.clock = clock.function
            $0.extendsExpirationOnAccess = true
        })
        try cache.setValue(bytes(10), forKey: "k", expiration: .after(.seconds(10)))
        try cache.setValue(bytes(10), forKey: "dated", expiration: .at(Date(timeIntervalSince1970: clock.wall + 10)))
        for _ in 0..<5 {
            clock.advance(by: 8)
            #expect(try cache.value(forKey: "k") != nil)
        }
        // Written to the row by a flush; the trim must see the extended deadline.
        try cache.flush()
        #expect(try cache.removeExpired() == 1)  // only "dated": absolute dates do not extend
        clock.advance(by: 11)
        #expect(try cache.value(forKey: "k") == nil)
    }

    @Test func expirationDoesNotExtendByDefault() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.clock = clock.function })
        try cache.setValue(bytes(10), forKey: "k", expiration: .after(.seconds(10)))
        clock.advance(by: 8)
        #expect(try cache.value(forKey: "k") != nil)
        clock.advance(by: 3)
        #expect(try cache.value(forKey: "k") == nil)
    }

    @Test func extendedDataIsStoredReplacedAndRemovedWithTheValue() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try cache.setValue(bytes(10), forKey: "a", extendedData: Data("one".utf8))
        try cache.setValue(bytes(50_000), forKey: "b", extendedData: Data())
        #expect(try cache.extendedData(forKey: "a") == Data("one".utf8))
        #expect(try cache.extendedData(forKey: "b") == Data())
        try cache.setValue(bytes(10), forKey: "a")
        #expect(try cache.extendedData(forKey: "a") == nil)
        try cache.removeValue(forKey: "b")
        #expect(try cache.extendedData(forKey: "b") == nil)
    }

    @Test func keysArePagedInOrderAndSkipExpiredEntries() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.clock = clock.function })
        let keys = (0..<250).map { String(format: "key-%04d", $0) }
        for key in keys.shuffled() { try cache.setValue(bytes(5), forKey: key) }
        try cache.setValue(bytes(5), forKey: "key-0100x", expiration: .after(.seconds(1)))
        clock.advance(by: 2)
        var seen: [String] = []
        var after: String?
        while true {
            let page = try cache.keys(after: after, limit: 64)
            if page.isEmpty { break }
            seen += page
            after = page.last
        }
        #expect(seen == keys)
        #expect(try cache.keys(limit: 0).isEmpty)
    }

    @Test func codableValuesRoundTripThroughACoder() throws {
        struct Point: Codable, Equatable { var x: Int; var y: Int }
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try cache.setValue(Point(x: 1, y: 2), forKey: "p", coder: JSONCoder<Point>())
        #expect(try cache.value(forKey: "p", coder: JSONCoder<Point>()) == Point(x: 1, y: 2))
        try cache.setValue(Data("not json".utf8), forKey: "bad")
        #expect(throws: KVCacheError.self) { try cache.value(forKey: "bad", coder: JSONCoder<Point>()) }
        #expect(try cache.value(forKey: "none", coder: PropertyListCoder<Point>()) == nil)
    }

    @Test func asyncVariantsShareTheSyncNames() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try await cache.setValue(bytes(100), forKey: "a")
        #expect(try await cache.value(forKey: "a") == bytes(100))
        #expect(try await cache.contains("a"))
        try await cache.setValue([1, 2, 3], forKey: "typed", coder: JSONCoder<[Int]>())
        #expect(try await cache.value(forKey: "typed", coder: JSONCoder<[Int]>()) == [1, 2, 3])
        try await cache.removeValue(forKey: "a")
        #expect(try await cache.value(forKey: "a") == nil)
        try await cache.flush()
        try await cache.removeAll()
        #expect(try await cache.keys(limit: 10).isEmpty)
    }
}
