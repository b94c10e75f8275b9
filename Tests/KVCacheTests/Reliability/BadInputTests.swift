import Foundation
import Testing
@testable import KVCache

/// Keys and values at the edges (empty, huge, NUL inside, path-like, Unicode
/// spelled two ways, zero bytes) and configurations at the edges (limits of 0,
/// negative and Int.max; inline thresholds 0 and Int.max). A clear typed error
/// or the documented behaviour, never a crash and never a file outside the cache.
///
/// Keys compare byte-wise (their UTF-8), like SQLite's TEXT comparison: "é" as
/// one scalar (NFC) and as "e" + combining accent (NFD) are two different keys,
/// although Swift's `==` calls the strings equal. Normalise keys before use if
/// they come from sources that spell them differently.
@Suite struct BadInputTests {
    @Test func emptyAndOverlongKeysAreRejectedWithAReason() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.maxKeyLength = 16 })
        for key in ["", String(repeating: "x", count: 17), String(repeating: "é", count: 9)] {
            #expect(throws: KVCacheError.self) { try cache.setValue(bytes(1), forKey: key) }
            #expect(throws: KVCacheError.self) { _ = try cache.value(forKey: key) }
            #expect(throws: KVCacheError.self) { try cache.removeValue(forKey: key) }
            #expect(throws: KVCacheError.self) { _ = try cache.contains(key) }
        }
        try cache.setValue(bytes(1), forKey: String(repeating: "x", count: 16))
        #expect(try cache.value(forKey: String(repeating: "x", count: 16)) == bytes(1))
    }

    @Test func aHugeKeyWorksWhenTheLimitAllowsIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.maxKeyLength = .max })
        let key = String(repeating: "k", count: 1 << 20)
        try cache.setValue(bytes(30_000), forKey: key)
        try cache.flush()
        #expect(try cache.value(forKey: key) == bytes(30_000))
        #expect(try cache.keys(limit: 10) == [key])
    }

    @Test func keysWithNULAreDistinctFromTheirPrefixes() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let keys = ["a", "a\0", "a\0b", "\0", "\0\0"]
        do {
            let cache = try DiskCache(directory: dir.url, configuration: .testing())
            for (index, key) in keys.enumerated() { try cache.setValue(bytes(index + 1), forKey: key) }
            try cache.flush()
            #expect(try cache.totalCount == keys.count)
            try cache.close()
        }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        for (index, key) in keys.enumerated() { #expect(try cache.value(forKey: key) == bytes(index + 1), "\(Array(key.utf8))") }
        #expect(Set(try cache.keys(limit: 10)) == Set(keys))
        try cache.removeValue(forKey: "a\0")
        #expect(try cache.value(forKey: "a") == bytes(1))
        #expect(try cache.value(forKey: "a\0b") == bytes(3))
    }

    @Test(arguments: [false, true])
    func unicodeKeysCompareByteWiseWhetherCommittedOrNot(committedBetween: Bool) throws {
        let composed = "caf\u{E9}"           // NFC
        let decomposed = "cafe\u{301}"       // NFD: Swift's == says equal
        #expect(composed == decomposed && Array(composed.utf8) != Array(decomposed.utf8))
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(3600) })
        try cache.setValue(bytes(10, seed: 1), forKey: composed)
        if committedBetween { try cache.flush() }
        try cache.setValue(bytes(20, seed: 2), forKey: decomposed)
        #expect(try cache.value(forKey: composed) == bytes(10, seed: 1))
        #expect(try cache.value(forKey: decomposed) == bytes(20, seed: 2))
        try cache.flush()
        #expect(try cache.totalCount == 2)
        #expect(try cache.value(forKey: composed) == bytes(10, seed: 1))
        #expect(try cache.value(forKey: decomposed) == bytes(20, seed: 2))
        try cache.removeValue(forKey: decomposed)
        #expect(try cache.value(forKey: composed) == bytes(10, seed: 1))
        #expect(try cache.value(forKey: decomposed) == nil)
        try cache.flush()
        #expect(try cache.totalCount == 1)
    }

    @Test func pathLikeKeysNeverTouchAnythingOutsideTheCache() throws {
        let parent = TemporaryDirectory("parent")
        defer { parent.remove() }
        try FileManager.default.createDirectory(at: parent.url, withIntermediateDirectories: true)
        try Data([1]).write(to: parent.url.appendingPathComponent("neighbour"))
        let before = try snapshot(parent.path, excluding: "cache")
        let keys = ["../../escape", "/etc/passwd", "../neighbour", "data/../../x", ".", "..", "a/b/c", "~", "manifest.sqlite",
                    "data", "trash/x", String(repeating: "../", count: 300), "%2e%2e%2f", "..\\..\\win"]
        let cacheURL = parent.url.appendingPathComponent("cache")
        do {
            let cache = try DiskCache(directory: cacheURL, configuration: .testing())
            for (index, key) in keys.enumerated() {
                try cache.setValue(bytes(index % 2 == 0 ? 10 : 30_000, seed: UInt8(index)), forKey: key)
            }
            try cache.flush()
            for (index, key) in keys.enumerated() {
                #expect(try cache.value(forKey: key) == bytes(index % 2 == 0 ? 10 : 30_000, seed: UInt8(index)))
            }
            for key in keys.prefix(4) { try cache.removeValue(forKey: key) }
            try cache.trim(toCount: 3)
            try cache.removeAll()
            cache.waitForBackgroundWork()
            try cache.close()
        }
        #expect(try snapshot(parent.path, excluding: "cache") == before)
        let names = try FileManager.default.contentsOfDirectory(atPath: cacheURL.path)
        #expect(Set(names).isSubset(of: ["manifest.sqlite", "manifest.sqlite-wal", "manifest.sqlite-shm", "data", "trash",
                                         KVStorage.reserveFileName]))
    }

    @Test func storeFilesAreOwnerOnly() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try cache.setValue(bytes(30_000), forKey: "file")
        try cache.setValue(bytes(10), forKey: "inline")
        try cache.flush()
        for folder in [dir.path, dir.dataPath, dir.path + "/trash"] {
            #expect(mode(folder) == 0o700, "\(folder): \(String(mode(folder) ?? 0, radix: 8))")
        }
        for file in dir.dataFiles().map({ dir.dataPath + "/" + $0 })
            + [dir.manifestPath, dir.manifestPath + "-wal", dir.manifestPath + "-shm",
               dir.path + "/" + KVStorage.reserveFileName] {
            #expect(mode(file) == 0o600, "\(file): \(String(mode(file) ?? 0, radix: 8))")
        }
        try cache.close()
    }

    @Test(arguments: [DiskCache.StorageMode.inline, .file, .mixed])
    func zeroLengthValuesAreValuesNotMisses(mode: DiskCache.StorageMode) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let cache = try DiskCache(directory: dir.url, configuration: .testing {
                $0.storageMode = mode
                $0.inlineThreshold = 0
            })
            try cache.setValue(Data(), forKey: "empty", extendedData: Data())
            #expect(try cache.value(forKey: "empty") == Data())
            try cache.flush()
            #expect(try cache.value(forKey: "empty") == Data())
            try cache.close()
        }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        #expect(try cache.value(forKey: "empty") == Data())
        #expect(try cache.extendedData(forKey: "empty") == Data())
        #expect(try cache.totalCount == 1)
        #expect(try cache.totalSize == 0)
    }

    @Test func negativeLimitsAndThresholdsAreInvalidArguments() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let invalid: [(inout DiskCache.Configuration) -> Void] = [
            { $0.countLimit = -1 }, { $0.sizeLimit = -1 }, { $0.ageLimit = .seconds(-1) }, { $0.inlineThreshold = -1 },
            { $0.freeDiskSpaceLimit = -1 }, { $0.lowWatermark = 0 }, { $0.lowWatermark = 1.5 }, { $0.maxKeyLength = 0 },
            { $0.autoTrimInterval = .zero }, { $0.groupCommitDelay = .seconds(-1) }, { $0.busyTimeout = .seconds(-1) },
            { $0.pageSize = 1000 }, { $0.lowWatermark = .nan },
        ]
        for (index, configure) in invalid.enumerated() {
            #expect(throws: KVCacheError.self, "configuration \(index)") {
                _ = try DiskCache(directory: dir.url, configuration: .testing(configure))
            }
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path), "a refused configuration created the directory")
    }

    @Test func limitsOfZeroAndIntMaxAndEdgeTrims() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.countLimit = 0 })
            for index in 0..<10 { try cache.setValue(bytes(index % 2 == 0 ? 10 : 30_000), forKey: "k\(index)") }
            cache.waitForBackgroundWork()
            #expect(try cache.totalCount == 0)
            try cache.close()
        }
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.countLimit = .max
            $0.sizeLimit = .max
            $0.maxKeyLength = .max
        })
        for index in 0..<10 { try cache.setValue(bytes(index % 2 == 0 ? 10 : 30_000), forKey: "k\(index)") }
        cache.waitForBackgroundWork()
        #expect(try cache.totalCount == 10)
        #expect(try cache.trim(toCount: .max) == 0)
        #expect(try cache.trim(toSize: .max) == 0)
        #expect(try cache.trim(toAge: .seconds(Int64.max)) == 0)
        #expect(try cache.trim(toFreeSpace: 0) == 0)
        // Negative arguments are refused and remove nothing (before issue 14 a negative
        // count was taken as 0 and emptied the cache).
        #expect(throws: KVCacheError.self) { try cache.trim(toAge: .seconds(-1)) }
        #expect(throws: KVCacheError.self) { try cache.trim(toCount: -5) }
        #expect(throws: KVCacheError.self) { try cache.trim(toSize: -5) }
        #expect(throws: KVCacheError.self) { try cache.trim(toFreeSpace: -5) }
        #expect(try cache.totalCount == 10)
        #expect(try cache.trim(toCount: 0) == 10)
        #expect(try cache.totalCount == 0)
        try cache.close()
        #expect(try storeProblems(dir).isEmpty)
    }

    @Test func inlineThresholdsAtTheEdgesPlaceEveryValueOnOneSide() throws {
        for (threshold, expectFiles) in [(0, true), (Int.max, false)] {
            let dir = TemporaryDirectory()
            defer { dir.remove() }
            let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.inlineThreshold = threshold })
            for size in [0, 1, 20 * 1024, 1 << 20] { try cache.setValue(bytes(size), forKey: "s\(size)") }
            try cache.flush()
            for size in [0, 1, 20 * 1024, 1 << 20] { #expect(try cache.value(forKey: "s\(size)") == bytes(size)) }
            #expect(cache.statistics.fileCount == (expectFiles ? 4 : 0), "threshold \(threshold)")
            try cache.close()
        }
    }

    @Test func extremeExpirationsAreStoredAsDocumented() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.clock = clock.function })
        try cache.setValue(bytes(1), forKey: "forever", expiration: .after(.seconds(Int64.max)))
        try cache.setValue(bytes(1), forKey: "future", expiration: .at(.distantFuture))
        try cache.setValue(bytes(1), forKey: "negative", expiration: .after(.seconds(-5)))
        try cache.setValue(bytes(1), forKey: "past", expiration: .at(.distantPast))
        try cache.flush()
        clock.advance(by: 1e9)
        #expect(try cache.value(forKey: "forever") == bytes(1))
        #expect(try cache.value(forKey: "future") == bytes(1))
        #expect(try cache.value(forKey: "negative") == nil)
        #expect(try cache.value(forKey: "past") == nil)
    }

    func mode(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    /// Every path below `root` (except `excluding`) with its size and modification time.
    func snapshot(_ root: String, excluding: String) throws -> [String: String] {
        var result: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            if relative == excluding || relative.hasPrefix(excluding + "/") { continue }
            let attributes = try FileManager.default.attributesOfItem(atPath: root + "/" + relative)
            result[relative] = "\(attributes[.size] ?? "")-\(attributes[.modificationDate] ?? "")"
        }
        return result
    }
}
