import CSQLite
import Foundation
import Testing
@testable import KVCache

@Suite struct DiskCorruptionTests {
    func fill(_ cache: DiskCache) throws {
        for index in 0..<20 {
            try cache.setValue(bytes(index % 2 == 0 ? 100 : 30_000, seed: UInt8(index)), forKey: "k\(index)")
        }
        try cache.flush()
    }

    /// A closed store holding `fill`'s entries.
    func fillAndClose(_ dir: TemporaryDirectory) throws {
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try fill(cache)
        try cache.close()
    }

    func overwrite(_ path: String, at offset: UInt64, with data: Data) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: data)
        try handle.close()
    }

    @Test func garbageOverTheDatabaseIsMovedAsideAndRebuilt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try fillAndClose(dir)
        #expect(!dir.dataFiles().isEmpty)
        try Data(repeating: 0x5a, count: 64 * 1024).write(to: URL(fileURLWithPath: dir.manifestPath))
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        #expect(try cache.value(forKey: "k0") == nil)
        #expect(try cache.totalCount == 0)
        #expect(cache.statistics.rebuilds == 1)
        let aside = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/corrupt")
        #expect(aside.contains { $0.hasPrefix("manifest-") && $0.hasSuffix(".sqlite") })
        // The old data files lost their rows: the sweep at open removes them.
        cache.waitForBackgroundWork()
        #expect(dir.dataFiles().isEmpty)
        try cache.setValue(bytes(50_000), forKey: "new")
        #expect(try cache.value(forKey: "new") == bytes(50_000))
    }

    @Test func damagedPagesAreDetectedAndTheStoreRebuilt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let cache = try DiskCache(directory: dir.url, configuration: .testing())
            try fill(cache)
            for index in 0..<300 { try cache.setValue(bytes(2000), forKey: "filler\(index)") }
            try cache.close()
        }
        // Keep the header and schema page, damage the rest.
        let size = fileSize(dir.manifestPath) ?? 0
        #expect(size > 8192)
        try overwrite(dir.manifestPath, at: 4096, with: Data(repeating: 0xa5, count: Int(size) - 4096))
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        // Detected at open or on first use; either way the cache works afterwards.
        _ = try cache.value(forKey: "k0")
        try cache.setValue(bytes(10), forKey: "after")
        #expect(try cache.value(forKey: "after") == bytes(10))
        #expect(cache.statistics.rebuilds == 1)
    }

    @Test func aTruncatedValueFileIsAMissAndItsRowIsRemoved() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.storageMode = .file })
        try fill(cache)
        let file = try rawRows(dir.manifestPath, "SELECT filename FROM manifest WHERE key = 'k3'")[0][0]!
        #expect(truncate(dir.dataPath + "/" + file, 100) == 0)
        #expect(try cache.value(forKey: "k3") == nil)
        try cache.flush()
        #expect(try rawRows(dir.manifestPath, "SELECT count(*) FROM manifest WHERE key = 'k3'") == [["0"]])
        #expect(FileManager.default.fileExists(atPath: dir.dataPath + "/" + file) == false)
        for index in 0..<20 where index != 3 {
            #expect(try cache.value(forKey: "k\(index)") == bytes(index % 2 == 0 ? 100 : 30_000, seed: UInt8(index)))
        }
        #expect(try cache.totalCount == 19)
        #expect(cache.statistics.brokenEntries == 1)
    }

    @Test func aDeletedValueFileIsAMissAndItsRowIsRemoved() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try fill(cache)
        let file = try rawRows(dir.manifestPath, "SELECT filename FROM manifest WHERE key = 'k5'")[0][0]!
        try FileManager.default.removeItem(atPath: dir.dataPath + "/" + file)
        #expect(try cache.contains("k5"))  // contains does not open files
        #expect(try cache.value(forKey: "k5") == nil)
        #expect(try cache.contains("k5") == false)
        #expect(try cache.totalCount == 19)
        #expect(try cache.value(forKey: "k7") == bytes(30_000, seed: 7))
    }

    @Test func orphanFilesAreSweptAndReferencedFilesKept() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.orphanGracePeriod = .seconds(3600) })
        cache.waitForBackgroundWork()
        try fill(cache)
        let live = Set(dir.dataFiles())
        for index in 0..<5 {
            let name = FileNameHash.fileName(forKey: "orphan", suffix: UInt64(index))
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: dir.dataPath + "/" + name))
        }
        // A file whose name the store never makes is not its own: never swept.
        try Data([4]).write(to: URL(fileURLWithPath: dir.dataPath + "/notes.txt"))
        // Young files are kept by the default grace period (another process may own them)...
        #expect(try cache.sweepOrphans() == 0)
        // ...and removed when the caller says no other process is writing.
        #expect(try cache.sweepOrphans(gracePeriod: .seconds(0)) == 5)
        #expect(Set(dir.dataFiles()) == live.union(["notes.txt"]))
        for index in 0..<20 { #expect(try cache.value(forKey: "k\(index)") != nil) }
    }

    @Test func uncommittedBatchFilesAreNotOrphans() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(3600) })
        try cache.setValue(bytes(30_000), forKey: "pending")
        #expect(try cache.sweepOrphans(gracePeriod: .seconds(0)) == 0)
        #expect(try cache.value(forKey: "pending") == bytes(30_000))
    }

    @Test func aBusyDatabaseThrowsAndKeepsTheCache() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try fillAndClose(dir)
        let locker = try Database(path: dir.manifestPath, busyTimeout: 0)
        try locker.execute("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; UPDATE stats SET count = count;")
        #expect {
            _ = try DiskCache(directory: dir.url, configuration: .testing { $0.busyTimeout = .seconds(0.05) })
        } throws: { error in
            guard let error = error as? KVCacheError else { return false }
            return error.code == .sqlite && error.sqliteResultCode == SQLITE_BUSY && error.message == "database is locked"
                && error.sql == "PRAGMA application_id" && error.path?.hasSuffix("/manifest.sqlite") == true
        }
        try locker.execute("ROLLBACK")
        locker.close()
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        #expect(try cache.totalCount == 20)
        #expect(cache.statistics.rebuilds == 0)
    }

    @Test func aNewerSchemaVersionIsRefusedWithoutWipingTheCache() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try fillAndClose(dir)
        let raw = try Database(path: dir.manifestPath, busyTimeout: 1)
        try raw.execute("PRAGMA user_version = 99")
        raw.close()
        #expect(throws: KVCacheError.self) { _ = try DiskCache(directory: dir.url, configuration: .testing()) }
        #expect(try rawRows(dir.manifestPath, "SELECT count(*) FROM manifest") == [["20"]])
    }

    @Test func removeAllSwapsTheDataFolderAndDeletesItInTheBackground() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try fill(cache)
        try cache.removeAll()
        #expect(try cache.totalCount == 0)
        #expect(try cache.value(forKey: "k1") == nil)
        #expect(dir.dataFiles().isEmpty)
        cache.waitForBackgroundWork()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/trash").isEmpty)
        try cache.setValue(bytes(30_000), forKey: "again")
        #expect(try cache.value(forKey: "again") == bytes(30_000))
        #expect(cache.statistics.evictions[.removed] == 20)
    }

    @Test func leftoverTrashIsDeletedAtOpen() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // A data folder removeAll moved there (its name and its files' names are the store's).
        let old = dir.path + "/trash/" + FileNameHash.fileName(forKey: "old", suffix: 1)
        try FileManager.default.createDirectory(atPath: old, withIntermediateDirectories: true)
        try Data([1]).write(to: URL(fileURLWithPath: old + "/" + FileNameHash.fileName(forKey: "file", suffix: 1)))
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        cache.waitForBackgroundWork()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/trash").isEmpty)
    }

    @Test func removeAllWithProgressReportsEveryStep() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        // More than two steps (KVStorage.removeAllStepLimit rows each).
        let count = 2 * KVStorage.removeAllStepLimit + 100
        for index in 0..<count { try cache.setValue(bytes(index % 50 == 0 ? 30_000 : 10), forKey: "k\(index)") }
        var reports: [(Int, Int)] = []
        try cache.removeAll { reports.append(($0, $1)) }
        #expect(reports.first! == (0, count))
        #expect(reports.last! == (count, count))
        #expect(reports.count >= 3)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.0 < $1.0 })
        #expect(try cache.totalCount == 0)
        #expect(dir.dataFiles().isEmpty)
    }
}
