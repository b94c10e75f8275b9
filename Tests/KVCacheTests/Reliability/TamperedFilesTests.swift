import Foundation
import Testing
@testable import KVCache

/// Value files and folders replaced behind the store's back: by a directory, by a
/// symlink (inside or out of the cache), a manifest row naming a path outside
/// data/, symlinks in trash/ and corrupt/, data/ itself a symlink. The store
/// misses or refuses with a typed error; nothing outside the cache directory is
/// ever read, written or deleted. (Truncated and deleted value files are covered
/// by DiskCorruptionTests.)
@Suite struct TamperedFilesTests {
    /// A cache with file values k0...k3 (30,000 bytes each) and a victim folder beside it.
    struct Fixture {
        let dir = TemporaryDirectory("tampered")
        let outside = TemporaryDirectory("outside")
        let cache: DiskCache

        init() throws {
            try FileManager.default.createDirectory(at: outside.url, withIntermediateDirectories: true)
            // A victim of the same size as a value, so a size check alone would not catch it.
            try Data(repeating: 0x66, count: 30_000).write(to: outside.url.appendingPathComponent("victim"))
            cache = try DiskCache(directory: dir.url, configuration: .testing { $0.storageMode = .file })
            for index in 0..<4 { try cache.setValue(bytes(30_000, seed: UInt8(index)), forKey: "k\(index)") }
            try cache.flush()
        }

        func file(of key: String) throws -> String {
            dir.dataPath + "/" + (try rawRows(dir.manifestPath, "SELECT filename FROM manifest WHERE key = '\(key)'")[0][0]!)
        }

        var victimIsIntact: Bool {
            (try? Data(contentsOf: outside.url.appendingPathComponent("victim"))) == Data(repeating: 0x66, count: 30_000)
        }

        func othersSurvive(except broken: Set<Int>) throws -> Bool {
            try (0..<4).filter { !broken.contains($0) }.allSatisfy {
                try cache.value(forKey: "k\($0)") == bytes(30_000, seed: UInt8($0))
            }
        }

        func remove() {
            try? cache.close()
            dir.remove()
            outside.remove()
        }
    }

    @Test func aValueFileReplacedByASymlinkOutsideIsAMissAndTheTargetIsUntouched() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let file = try fixture.file(of: "k1")
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: fixture.outside.path + "/victim")
        #expect(try fixture.cache.value(forKey: "k1") == nil)
        try fixture.cache.flush()
        try fixture.cache.removeValue(forKey: "k1")
        try fixture.cache.removeAll()
        fixture.cache.waitForBackgroundWork()
        #expect(fixture.victimIsIntact)
    }

    @Test func aValueFileReplacedByASymlinkToAnotherValueIsAMiss() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let file = try fixture.file(of: "k1")
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: try fixture.file(of: "k2"))
        #expect(try fixture.cache.value(forKey: "k1") == nil)
        #expect(try fixture.othersSurvive(except: [1]))
        try fixture.cache.flush()
        #expect(try storeProblems(fixture.dir).isEmpty)
    }

    @Test func aValueFileReplacedByADirectoryIsAMiss() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let file = try fixture.file(of: "k2")
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: false)
        #expect(try fixture.cache.value(forKey: "k2") == nil)
        #expect(try fixture.othersSurvive(except: [2]))
        try fixture.cache.flush()
        #expect(try rawRows(fixture.dir.manifestPath, "SELECT count(*) FROM manifest WHERE key = 'k2'") == [["0"]])
        // The same holds at the size a directory reports (4096 on ext4).
        try fixture.cache.setValue(bytes(4096), forKey: "page")
        try fixture.cache.flush()
        let page = try fixture.file(of: "page")
        try FileManager.default.removeItem(atPath: page)
        try FileManager.default.createDirectory(atPath: page, withIntermediateDirectories: false)
        #expect(try fixture.cache.value(forKey: "page") == nil)
    }

    @Test func aRowDeclaringAMultiGigabyteSizeIsAMissAndOthersSurvive() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.cache.close()
        let raw = try Database(path: fixture.dir.manifestPath, busyTimeout: 5)
        // 8 GB and Int64.max declared for 30,000-byte files: a read must not trust the
        // row's size to allocate, and must not return a value of the wrong size.
        try raw.execute("UPDATE manifest SET size = 8589934592 WHERE key = 'k0'")
        try raw.execute("UPDATE manifest SET size = 9223372036854775807 WHERE key = 'k1'")
        raw.close()
        let cache = try DiskCache(directory: fixture.dir.url, configuration: .testing { $0.storageMode = .file })
        defer { try? cache.close() }
        #expect(try cache.value(forKey: "k0") == nil)
        #expect(try cache.value(forKey: "k1") == nil)
        #expect(cache.statistics.brokenEntries == 2)
        #expect(try cache.value(forKey: "k2") == bytes(30_000, seed: 2))
        #expect(try cache.value(forKey: "k3") == bytes(30_000, seed: 3))
        try cache.flush()
        _ = try cache.verify(repair: true, orphanGracePeriod: .seconds(0))
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
        #expect(try cache.totalSize == 60_000)
    }

    @Test func aManifestRowNamingAPathOutsideDataIsNeverFollowed() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.cache.close()
        let escape = "../../" + fixture.outside.url.lastPathComponent + "/victim"
        let raw = try Database(path: fixture.dir.manifestPath, busyTimeout: 5)
        try raw.execute("UPDATE manifest SET filename = '\(escape)' WHERE key = 'k0'")
        try raw.execute("UPDATE manifest SET filename = '/' WHERE key = 'k1'")
        raw.close()
        let cache = try DiskCache(directory: fixture.dir.url, configuration: .testing { $0.storageMode = .file })
        #expect(try cache.value(forKey: "k0") == nil)
        #expect(try cache.value(forKey: "k1") == nil)
        try cache.setValue(bytes(30_000), forKey: "k0")
        try cache.removeValue(forKey: "k0")
        try cache.trim(toCount: 0)
        try cache.flush()
        cache.waitForBackgroundWork()
        #expect(fixture.victimIsIntact)
        try cache.close()
    }

    @Test func aSymlinkInTrashIsRemovedWithoutDeletingItsTarget() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.cache.close()
        // Named as the trash folders removeAll makes, so the store takes it for its own.
        try FileManager.default.createSymbolicLink(atPath: fixture.dir.path + "/trash/" + strayName,
                                                   withDestinationPath: fixture.outside.path)
        try FileManager.default.createDirectory(atPath: fixture.dir.path + "/corrupt", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: fixture.dir.path + "/corrupt/link",
                                                   withDestinationPath: fixture.outside.path)
        let cache = try DiskCache(directory: fixture.dir.url, configuration: .testing())
        cache.waitForBackgroundWork()
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.dir.path + "/trash").isEmpty)
        // A rebuild clears corrupt/ too.
        try cache.close()
        try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: fixture.dir.manifestPath))
        let rebuilt = try DiskCache(directory: fixture.dir.url, configuration: .testing())
        rebuilt.waitForBackgroundWork()
        #expect(rebuilt.statistics.rebuilds == 1)
        try rebuilt.close()
        #expect(fixture.victimIsIntact)
    }

    @Test func aDataFolderThatIsASymlinkIsRefused() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.cache.close()
        try FileManager.default.removeItem(atPath: fixture.dir.dataPath)
        try FileManager.default.createSymbolicLink(atPath: fixture.dir.dataPath, withDestinationPath: fixture.outside.path)
        #expect(throws: KVCacheError.self) {
            let cache = try DiskCache(directory: fixture.dir.url, configuration: .testing())
            try cache.setValue(bytes(30_000), forKey: "new")
            try cache.removeAll()
            cache.waitForBackgroundWork()
        }
        #expect(fixture.victimIsIntact)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.outside.path) == ["victim"])
    }

    @Test func aManifestThatIsASymlinkIsRefusedAndItsTargetUntouched() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.cache.close()
        let victim = fixture.outside.path + "/victim"
        try FileManager.default.removeItem(atPath: fixture.dir.manifestPath)
        try FileManager.default.createSymbolicLink(atPath: fixture.dir.manifestPath, withDestinationPath: victim)
        #expect(throws: KVCacheError.self) { _ = try DiskCache(directory: fixture.dir.url, configuration: .testing()) }
        #expect(fixture.victimIsIntact)
        #expect(!FileManager.default.fileExists(atPath: fixture.dir.path + "/corrupt"))
    }
}
