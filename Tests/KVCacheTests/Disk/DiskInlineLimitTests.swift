import Foundation
import Testing
@testable import KVCache

/// Values SQLite cannot keep in a row (issue 12, item 2): with `storageMode = .inline`
/// a 1 GB value was acknowledged, flushed, and read back as 0 bytes, because
/// `sqlite3_bind_blob64`'s SQLITE_TOOBIG was ignored and NULL stored; `verify` called
/// the store healthy.
@Suite(.serialized) struct DiskInlineLimitTests {
    @Test func aValueOverSQLitesLimitGoesToAFileInInlineMode() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let size = Database.lengthLimit + 1
        var value = Data(count: size)
        value[0] = 1
        value[size - 1] = 2
        do {
            let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.storageMode = .inline })
            try cache.setValue(value, forKey: "huge")
            try cache.setValue(bytes(10), forKey: "small")
            try cache.flush()
            try cache.close()
        }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.storageMode = .inline })
        defer { try? cache.close() }
        let read = try #require(try cache.value(forKey: "huge"))
        #expect(read.count == size)
        #expect(read.first == 1 && read.last == 2)
        #expect(try cache.value(forKey: "small") == bytes(10))
        #expect(dir.dataFiles().count == 1)
        #expect(try cache.verify().isHealthy)
    }

    @Test func verifyReportsAndRepairsInlineDataOfTheWrongSize() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let cache = try DiskCache(directory: dir.url, configuration: .testing())
            for key in ["a", "b", "c"] { try cache.setValue(bytes(100), forKey: key) }
            try cache.flush()
            try cache.close()
        }
        _ = try rawRows(dir.manifestPath, "UPDATE manifest SET inline_data = NULL WHERE key = 'a'")
        _ = try rawRows(dir.manifestPath, "UPDATE manifest SET inline_data = x'0102' WHERE key = 'b'")
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        defer { try? cache.close() }
        // Reads never return the damaged bytes.
        #expect(try cache.value(forKey: "a") == nil)
        #expect(try cache.value(forKey: "b") == nil)
        #expect(try cache.value(forKey: "c") == bytes(100))
        let report = try cache.verify()
        #expect(!report.isHealthy)
        #expect(report.damagedInlineEntries.map(\.key) == ["a", "b"])
        #expect(report.damagedInlineEntries.map(\.actualSize) == [nil, 2])
        let repaired = try cache.verify(repair: true)
        #expect(repaired.repairs?.removedEntries == 2)
        #expect(try cache.verify().isHealthy)
        #expect(try cache.totalCount == 1)
        #expect(try cache.value(forKey: "c") == bytes(100))
    }

    @Test func oversizedExtendedDataIsRejectedBeforeAnythingIsStored() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        defer { try? cache.close() }
        try cache.setValue(bytes(10), forKey: "k")
        let extended = Data(count: Database.lengthLimit / 4 + 1)
        #expect(throws: KVCacheError.self) { try cache.setValue(bytes(30_000), forKey: "k", extendedData: extended) }
        #expect(try cache.value(forKey: "k") == bytes(10))
        #expect(dir.dataFiles().isEmpty)
    }
}
