import Foundation
import Testing
@testable import KVCache

/// Where values land: SQLite row or data file, by mode and threshold.
@Suite struct DiskPlacementTests {
    /// (key, filename or nil, size, inline byte count) from a raw connection.
    func rows(_ dir: TemporaryDirectory) throws -> [String: (file: String?, size: Int64, inline: Int64?)] {
        var result: [String: (String?, Int64, Int64?)] = [:]
        for row in try rawRows(dir.manifestPath, "SELECT key, filename, size, length(inline_data) FROM manifest") {
            result[row[0]!] = (row[1], Int64(row[2]!)!, row[3].flatMap { Int64($0) })
        }
        return result
    }

    @Test func mixedModeKeepsValuesBelowTheThresholdInline() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.inlineThreshold = 1000 })
        try cache.setValue(bytes(999), forKey: "below")
        try cache.setValue(bytes(1000), forKey: "at")
        try cache.setValue(bytes(1001), forKey: "above")
        try cache.flush()
        let rows = try rows(dir)
        #expect(rows["below"]?.file == nil && rows["below"]?.inline == 999)
        #expect(rows["at"]?.file != nil && rows["at"]?.inline == nil)
        #expect(rows["above"]?.file != nil && rows["above"]?.size == 1001)
        #expect(Set(dir.dataFiles()) == Set([rows["at"]!.file!, rows["above"]!.file!]))
        #expect(fileSize(dir.dataPath + "/" + rows["at"]!.file!) == 1000)
        let statistics = cache.statistics
        #expect(statistics.inlineCount == 1 && statistics.fileCount == 2)
        #expect(statistics.fileSize == 2001 && statistics.inlineSize == 999)
    }

    @Test func defaultThresholdIs20KB() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try cache.setValue(bytes(20 * 1024 - 1), forKey: "below")
        try cache.setValue(bytes(20 * 1024), forKey: "at")
        try cache.flush()
        let rows = try rows(dir)
        #expect(rows["below"]?.file == nil)
        #expect(rows["at"]?.file != nil)
        #expect(dir.dataFiles().count == 1)
    }

    @Test(arguments: [DiskCache.StorageMode.inline, .file])
    func singleModesPlaceEveryValueTheSameWay(mode: DiskCache.StorageMode) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.storageMode = mode })
        for size in [0, 10, 100_000] {
            try cache.setValue(bytes(size), forKey: "k\(size)")
        }
        try cache.flush()
        for size in [0, 10, 100_000] { #expect(try cache.value(forKey: "k\(size)") == bytes(size)) }
        let rows = try rows(dir)
        let inFiles = rows.values.filter { $0.file != nil }.count
        #expect(inFiles == (mode == .file ? 3 : 0))
        #expect(dir.dataFiles().count == inFiles)
    }

    @Test func replacingInlineWithFileAndBackLeavesNoStrayFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try cache.setValue(bytes(10), forKey: "k")
        try cache.setValue(bytes(40_000, seed: 2), forKey: "k")
        try cache.flush()
        #expect(dir.dataFiles().count == 1)
        try cache.setValue(bytes(50_000, seed: 3), forKey: "k")
        try cache.flush()
        #expect(dir.dataFiles().count == 1)
        #expect(try rows(dir)["k"]?.file == dir.dataFiles().first)
        #expect(try cache.value(forKey: "k") == bytes(50_000, seed: 3))
        try cache.setValue(bytes(20, seed: 4), forKey: "k")
        try cache.flush()
        #expect(dir.dataFiles().isEmpty)
        #expect(try cache.value(forKey: "k") == bytes(20, seed: 4))
        #expect(try cache.totalCount == 1)
        #expect(try cache.totalSize == 20)
    }

    @Test func fileNamesComeFromAHashNeverFromTheKey() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.storageMode = .file })
        let keys = ["../../escape", "/etc/passwd", "a/b", "with\u{0}nul", "ünïcødé 🚀", String(repeating: "x", count: 4096)]
        for (index, key) in keys.enumerated() { try cache.setValue(bytes(index + 1), forKey: key) }
        try cache.flush()
        for (index, key) in keys.enumerated() { #expect(try cache.value(forKey: key) == bytes(index + 1)) }
        let names = dir.dataFiles()
        #expect(names.count == keys.count)
        for name in names {
            #expect(name.count == 33 && name.allSatisfy { $0.isHexDigit || $0 == "-" })
        }
    }

    @Test func fileNameSuffixesNeverRepeatWithinAStoreAndDifferBetweenStores() {
        var first = FileNameSuffixes(), second = FileNameSuffixes()
        let one = (0..<10_000).map { _ in first.next() }
        let other = (0..<10_000).map { _ in second.next() }
        #expect(Set(one).count == one.count)
        #expect(Set(one).isDisjoint(with: other))
    }

    @Test func invalidKeysThrowInvalidKey() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.maxKeyLength = 8 })
        #expect(throws: KVCacheError.self) { try cache.setValue(Data(), forKey: "") }
        #expect(throws: KVCacheError.self) { try cache.value(forKey: "123456789") }
        do {
            try cache.setValue(Data(), forKey: "")
        } catch let error as KVCacheError {
            guard case .invalidKey = error else { Issue.record("unexpected \(error)"); return }
        }
        try cache.setValue(Data([1]), forKey: "12345678")
        #expect(try cache.value(forKey: "12345678") == Data([1]))
    }

    @Test func directoryIsPrivateAndFilesAreOwnerOnly() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.storageMode = .file })
        try cache.setValue(bytes(10), forKey: "k")
        let directoryMode = try FileManager.default.attributesOfItem(atPath: dir.path)[.posixPermissions] as? Int
        let fileMode = try FileManager.default.attributesOfItem(atPath: dir.dataPath + "/" + dir.dataFiles()[0])[.posixPermissions] as? Int
        #expect(directoryMode == 0o700)
        #expect(fileMode == 0o600)
    }

    @Test func invalidConfigurationThrowsInvalidArgument() {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        #expect(throws: KVCacheError.self) {
            _ = try DiskCache(directory: dir.url, configuration: .testing { $0.lowWatermark = 0 })
        }
        #expect(throws: KVCacheError.self) {
            _ = try DiskCache(directory: dir.url, configuration: .testing { $0.inlineThreshold = -1 })
        }
    }
}
