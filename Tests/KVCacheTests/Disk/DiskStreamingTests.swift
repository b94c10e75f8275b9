import Foundation
import Testing
@testable import KVCache

/// Values written and read in pieces (`makeValueWriter`, `valueReader`).
@Suite struct DiskStreamingTests {
    func makeCache(_ dir: TemporaryDirectory, _ configure: (inout DiskCache.Configuration) -> Void = { _ in }) throws -> DiskCache {
        try DiskCache(directory: dir.url, configuration: .testing(configure))
    }

    func pieces(of data: Data, size: Int) -> [Data] {
        stride(from: 0, to: data.count, by: size).map { data[$0..<min($0 + size, data.count)] }
    }

    @Test func aValueWrittenInPiecesIsStoredInAFileAndReadBackInPieces() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        let value = bytes(3_000_000, seed: 3)
        let writer = try cache.makeValueWriter(forKey: "big")
        for piece in pieces(of: value, size: 65_536) { try writer.write(piece) }
        #expect(writer.count == 3_000_000)
        // Nothing is stored before the commit.
        #expect(try cache.value(forKey: "big") == nil)
        try writer.commit()
        #expect(try cache.value(forKey: "big") == value)
        #expect(dir.dataFiles().count == 1)

        let reader = try #require(try cache.valueReader(forKey: "big"))
        #expect(reader.count == 3_000_000)
        var read = Data()
        while true {
            let piece = try reader.read(upTo: 100_000)
            if piece.isEmpty { break }
            #expect(piece.count <= 100_000)
            read.append(piece)
        }
        #expect(read == value)
        #expect(try reader.read(at: 2_999_990, count: 100) == value[2_999_990...])
        #expect(try reader.read(at: 3_000_000, count: 1).isEmpty)
        try cache.flush()
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
    }

    @Test func aSmallValueWrittenInPiecesStaysInline() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        let writer = try cache.makeValueWriter(forKey: "small", expiration: .after(.seconds(3600)))
        try writer.write(Data("hello, ".utf8))
        try writer.write(Data("world".utf8))
        try writer.commit()
        #expect(try cache.value(forKey: "small") == Data("hello, world".utf8))
        #expect(dir.dataFiles().isEmpty)
        let reader = try #require(try cache.valueReader(forKey: "small"))
        #expect(reader.count == 12)
        #expect(try reader.read(upTo: 5) == Data("hello".utf8))
        #expect(try reader.read(at: 7, count: 100) == Data("world".utf8))
        #expect(try cache.info(forKey: "small")?.expirationDate != nil)
        #expect(try cache.info(forKey: "small")?.isInFile == false)
    }

    @Test func inTheInlineModeAStreamedValueIsKeptInTheManifest() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir) { $0.storageMode = .inline }
        let value = bytes(200_000, seed: 5)
        let writer = try cache.makeValueWriter(forKey: "k")
        for piece in pieces(of: value, size: 30_000) { try writer.write(piece) }
        try writer.commit()
        #expect(try cache.value(forKey: "k") == value)
        #expect(dir.dataFiles().isEmpty)
    }

    @Test func aCancelledOrDroppedWriterLeavesNothingAndKeepsTheOldValue() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        let old = bytes(50_000, seed: 1)
        try cache.setValue(old, forKey: "k")
        let writer = try cache.makeValueWriter(forKey: "k")
        try writer.write(bytes(100_000, seed: 2))
        #expect(dir.dataFiles().count == 2)
        writer.cancel()
        #expect(dir.dataFiles().count == 1)
        #expect(try cache.value(forKey: "k") == old)
        #expect(throws: KVCacheError.self) { try writer.write(Data([1])) }
        #expect(throws: KVCacheError.self) { try writer.commit() }
        do {
            let dropped = try cache.makeValueWriter(forKey: "k")
            try dropped.write(bytes(100_000, seed: 3))
        }
        #expect(dir.dataFiles().count == 1)
        #expect(try cache.value(forKey: "k") == old)
        try cache.flush()
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
    }

    @Test func aCommitReplacesTheOldValueAndDeletesItsFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        try cache.setValue(bytes(50_000, seed: 1), forKey: "k")
        let writer = try cache.makeValueWriter(forKey: "k")
        try writer.write(bytes(60_000, seed: 2))
        try writer.commit()
        #expect(throws: KVCacheError.self) { try writer.commit() }
        try cache.flush()
        #expect(try cache.value(forKey: "k") == bytes(60_000, seed: 2))
        #expect(dir.dataFiles().count == 1)
    }

    @Test func aReaderKeepsTheValueItOpenedAfterTheKeyIsReplacedOrRemoved() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        let value = bytes(80_000, seed: 4)
        try cache.setValue(value, forKey: "k")
        let reader = try #require(try cache.valueReader(forKey: "k"))
        try cache.setValue(bytes(90_000, seed: 5), forKey: "k")
        try cache.removeValue(forKey: "k")
        try cache.flush()
        #expect(dir.dataFiles().isEmpty)
        #expect(try reader.read(at: 0, count: 1 << 20) == value)
        #expect(try cache.valueReader(forKey: "k") == nil)
    }

    @Test func badArgumentsGetTypedErrors() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        #expect(throws: KVCacheError.self) { try cache.makeValueWriter(forKey: "") }
        #expect(throws: KVCacheError.self) { try cache.makeValueWriter(forKey: String(repeating: "k", count: 100_000)) }
        #expect(throws: KVCacheError.self) { try cache.valueReader(forKey: "") }
        try cache.setValue(bytes(30_000), forKey: "k")
        let reader = try #require(try cache.valueReader(forKey: "k"))
        for (offset, count) in [(0, 0), (0, -1), (-1, 10), (Int64.min, 1)] as [(Int64, Int)] {
            #expect(throws: KVCacheError.self) { try reader.read(at: offset, count: count) }
        }
        #expect(throws: KVCacheError.self) { try reader.read(upTo: 0) }
        #expect(try reader.read(at: .max, count: .max).isEmpty)
        try cache.close()
        let readOnly = try DiskCache(directory: dir.url, configuration: .testing { $0.isReadOnly = true })
        #expect(throws: KVCacheError.readOnly(path: readOnly.path)) { try readOnly.makeValueWriter(forKey: "k") }
        #expect(try readOnly.valueReader(forKey: "k")?.count == 30_000)
    }

    /// A file that shrank behind the cache's back is an error of the read, not short data.
    @Test func aFileThatEndsEarlyIsReportedAsCorrupt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        try cache.setValue(bytes(40_000), forKey: "k")
        let reader = try #require(try cache.valueReader(forKey: "k"))
        let file = try #require(dir.dataFiles().first)
        #expect(truncate(dir.dataPath + "/" + file, 10_000) == 0)
        #expect(throws: KVCacheError.self) { try reader.read(at: 0, count: 40_000) }
    }

    /// Another process's orphan sweep may delete the file of a writer that stalled: the commit
    /// says so rather than store a value whose file is gone.
    @Test func aCommitWhoseFileWasDeletedThrowsAndStoresNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        let writer = try cache.makeValueWriter(forKey: "k")
        try writer.write(bytes(100_000))
        let file = try #require(dir.dataFiles().first)
        #expect(unlink(dir.dataPath + "/" + file) == 0)
        #expect(throws: KVCacheError.self) { try writer.commit() }
        #expect(try cache.value(forKey: "k") == nil)
        try cache.flush()
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
    }
}
