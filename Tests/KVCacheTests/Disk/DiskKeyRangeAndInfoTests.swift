import Foundation
import Testing
@testable import KVCache

/// `keys(withPrefix:after:limit:)` (one range of the primary key) and `info(forKey:)`.
@Suite struct DiskKeyRangeAndInfoTests {
    @Test(arguments: ["", "a", "ab", "b/", "\u{D7FF}", "z\u{10FFFF}", "\u{10FFFF}", "é"])
    func theUpperBoundOfAPrefixIsTheLeastStringAboveEveryKeyWithIt(prefix: String) {
        let keys = ["", "a", "a\u{10FFFF}", "ab", "ab\u{0}", "abc", "ac", "b", "b/", "b/x", "b0", "z", "z\u{10FFFF}",
                    "z\u{10FFFF}x", "\u{D7FF}", "\u{D7FF}q", "\u{E000}", "é", "éa", "ê", "\u{10FFFF}", "\u{10FFFF}a"]
        guard let upper = KVStorage.upperBound(ofKeysWithPrefix: prefix) else {
            // No bound: every key at or above the prefix starts with it.
            for key in keys where !key.utf8.lexicographicallyPrecedes(prefix.utf8) { #expect(key.hasPrefix(prefix)) }
            return
        }
        for key in keys {
            let inRange = !key.utf8.lexicographicallyPrecedes(prefix.utf8) && key.utf8.lexicographicallyPrecedes(upper.utf8)
            // Byte-wise, as the manifest compares: `hasPrefix` compares characters, not bytes.
            #expect(inRange == key.utf8.starts(with: prefix.utf8), "\(key.debugDescription) with \(upper.debugDescription)")
        }
    }

    @Test func keysWithAPrefixArePagedAndSkipExpiredAndPendingChanges() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.clock = clock.function })
        defer { try? cache.close() }
        for key in ["user:1", "user:2", "user:3", "user:30", "users", "user", "team:1", "use"] {
            try cache.setValue(bytes(10), forKey: key)
        }
        try cache.setValue(bytes(10), forKey: "user:4", expiration: .after(.seconds(10)))
        try cache.flush()
        try cache.setValue(bytes(10), forKey: "user:5")  // pending
        try cache.removeValue(forKey: "user:2")          // pending
        clock.advance(by: 20)                            // user:4 expires
        #expect(try cache.keys(withPrefix: "user:", limit: 100) == ["user:1", "user:3", "user:30", "user:5"])
        #expect(try cache.keys(withPrefix: "user:", limit: 2) == ["user:1", "user:3"])
        #expect(try cache.keys(withPrefix: "user:", after: "user:3", limit: 2) == ["user:30", "user:5"])
        #expect(try cache.keys(withPrefix: "user:", after: "user:5", limit: 2) == [])
        // An `after` before the prefix starts at the prefix; one past it ends the range.
        #expect(try cache.keys(withPrefix: "user:", after: "a", limit: 1) == ["user:1"])
        #expect(try cache.keys(withPrefix: "user:", after: "zzz", limit: 10) == [])
        #expect(try cache.keys(withPrefix: "user", limit: 100)
            == ["user", "user:1", "user:3", "user:30", "user:5", "users"])
        #expect(try cache.keys(withPrefix: "nobody", limit: 100) == [])
        #expect(try cache.keys(limit: 3) == ["team:1", "use", "user"])
        #expect(try cache.keys(withPrefix: "user:", limit: 0) == [])
        #expect(try cache.keys(withPrefix: "user:", limit: -1) == [])
    }

    @Test func infoReportsSizePlaceAndExpirationWithoutRecordingAnAccess() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.clock = clock.function })
        defer { try? cache.close() }
        try cache.setValue(bytes(100), forKey: "inline", expiration: .after(.seconds(60)))
        try cache.setValue(bytes(30_000), forKey: "file")
        let pending = try #require(try cache.info(forKey: "inline"))
        #expect(pending.size == 100 && !pending.isInFile)
        #expect(pending.expirationDate == Date(timeIntervalSince1970: clock.wall + 60))
        #expect(pending.remainingLifetime(from: Date(timeIntervalSince1970: clock.wall + 15)) == .seconds(45))
        try cache.flush()
        let committed = try #require(try cache.info(forKey: "inline"))
        #expect(committed == pending)
        let file = try #require(try cache.info(forKey: "file"))
        #expect(file.size == 30_000 && file.isInFile && file.expirationDate == nil && file.remainingLifetime() == nil)
        #expect(try cache.info(forKey: "missing") == nil)
        clock.advance(by: 61)
        #expect(try cache.info(forKey: "inline") == nil)
        try cache.removeValue(forKey: "file")
        #expect(try cache.info(forKey: "file") == nil)
        #expect(cache.statistics.hits == 0 && cache.statistics.misses == 0)
        #expect(throws: KVCacheError.self) { try cache.info(forKey: "") }
    }

    @Test func infoFollowsAnExpirationExtendedByAnAccess() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.clock = clock.function
            $0.extendsExpirationOnAccess = true
        })
        defer { try? cache.close() }
        try cache.setValue(bytes(100), forKey: "k", expiration: .after(.seconds(60)))
        try cache.flush()
        clock.advance(by: 50)
        #expect(try cache.value(forKey: "k") == bytes(100))  // moves the expiration to now + 60
        let info = try #require(try cache.info(forKey: "k"))
        #expect(info.lifetime == .seconds(60))
        #expect(info.expirationDate == Date(timeIntervalSince1970: clock.wall + 60))
    }
}

/// `keys(withPrefix:pageSize:)`: every key once, in order, a page at a time.
@Suite struct DiskKeySequenceTests {
    @Test func theSequenceListsEveryKeyOnceInOrder() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        defer { try? cache.close() }
        var expected: [String] = []
        for index in 0..<250 {
            let key = "k" + String(index + 1000)
            expected.append(key)
            try await cache.setValue(bytes(1), forKey: key)
        }
        try await cache.setValue(bytes(1), forKey: "other")
        var listed: [String] = []
        for try await key in cache.keys(withPrefix: "k", pageSize: 100) { listed.append(key) }
        #expect(listed == expected)
        listed = []
        for try await key in cache.keys(withPrefix: "k", pageSize: 250) { listed.append(key) }  // a full last page
        #expect(listed == expected)
        var all = 0
        for try await _ in cache.keys(pageSize: 0) { all += 1 }  // at least one per page
        #expect(all == 251)
        for try await key in cache.keys(withPrefix: "none") { Issue.record("unexpected \(key)") }
    }

    @Test func theFacadeListsItsDiskKeys() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        defer { try? cache.close() }
        try await cache.setValues(["user:1": bytes(1), "user:2": bytes(1), "team:1": bytes(1)])
        var keys: [String] = []
        for try await key in cache.keys(withPrefix: "user:") { keys.append(key) }
        #expect(keys == ["user:1", "user:2"])
    }
}
