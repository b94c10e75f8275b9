import Foundation
import Testing
@testable import KVCache

/// File values are written outside the cache's lock, between two short lock holds
/// (reserve a name, record the write): what happens in between.
@Suite struct DiskFileWriteTests {
    func makeCache(_ dir: TemporaryDirectory) throws -> DiskCache {
        try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(3600) })
    }

    /// Reserves a name and writes `data` to it, as `setValue` does before recording.
    func writeUnrecorded(_ data: Data, forKey key: String, in cache: DiskCache) throws -> String {
        let reserved = try #require(try cache.reserveFileName(forKey: key, size: data.count))
        #expect(try cache.files.write(data, named: reserved, sync: false))
        return reserved
    }

    func record(_ data: Data, _ reserved: String, forKey key: String, in cache: DiskCache) throws {
        try cache.recordFileValue(data, writtenTo: reserved, forKey: key)
    }

    @Test func theOrphanSweepKeepsAFileWrittenButNotYetRecorded() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        let value = bytes(30_000, seed: 7)
        let reserved = try writeUnrecorded(value, forKey: "big", in: cache)
        #expect(try cache.sweepOrphans(gracePeriod: .seconds(0)) == 0)
        try record(value, reserved, forKey: "big", in: cache)
        try cache.flush()
        #expect(try cache.value(forKey: "big") == value)
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
    }

    @Test func aRemoveAllBetweenWritingAndRecordingDoesNotLoseTheValue() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        try cache.setValue(bytes(30_000, seed: 1), forKey: "before")
        let value = bytes(30_000, seed: 8)
        let reserved = try writeUnrecorded(value, forKey: "big", in: cache)
        // The data folder, with the file just written, goes to the trash.
        try cache.removeAll()
        try record(value, reserved, forKey: "big", in: cache)
        cache.waitForBackgroundWork()
        try cache.flush()
        #expect(try cache.value(forKey: "before") == nil)
        #expect(try cache.value(forKey: "big") == value)
        #expect(dir.dataFiles().count == 1)
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
    }

    /// The trash cleanup that open starts in the background can run late, under load while
    /// removeAll swaps the data folder (held here after the old folder went to the trash,
    /// before the unrecorded file comes back); another process opening the directory runs
    /// it too. Before, it deleted the swapped-out folder with the file still in it, and the
    /// value was lost once recorded (seen in CI).
    @Test func theTrashCleanupDuringTheFolderSwapDoesNotDeleteTheFilesComingBack() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        cache.waitForBackgroundWork()
        let value = bytes(30_000, seed: 10)
        let reserved = try writeUnrecorded(value, forKey: "big", in: cache)
        let trash = cache.trashPath
        // The hook runs under the store's lock, as the swap does.
        cache.hooks.dataFolderWillReturnFiles.setOnce { DiskCache.removeStaleTrash(in: trash) }
        try cache.removeAll()
        try record(value, reserved, forKey: "big", in: cache)
        try cache.flush()
        cache.waitForBackgroundWork()
        #expect(try cache.value(forKey: "big") == value)
        #expect(dir.dataFiles() == [reserved])
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
    }

    /// A folder left mid-swap by a removeAll that ended there (a crash, which freed the
    /// swap's lock) is deleted by the next cleanup; one whose swap holds the lock is kept.
    @Test func aFolderLeftMidSwapIsDeletedOnceItsSwapNoLongerHoldsIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        cache.waitForBackgroundWork()
        let trash = cache.trashPath
        let name = FileNameHash.hex(1) + "-" + FileNameHash.hex(2)
        let left = trash + "/" + name + KVStorage.returningSuffix
        try FileStore.createSubfolder(left)
        #expect(FileManager.default.createFile(atPath: left + "/" + name, contents: Data([1])))
        let lock = try #require(FileStore.lockFolder(left))
        DiskCache.removeStaleTrash(in: trash)
        #expect(FileManager.default.fileExists(atPath: left + "/" + name))
        close(lock)
        DiskCache.removeStaleTrash(in: trash)
        #expect(!FileManager.default.fileExists(atPath: left))
    }

    @Test func aFileWriteThatCannotBeRecordedLeavesNoFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        let value = bytes(30_000, seed: 9)
        let reserved = try writeUnrecorded(value, forKey: "big", in: cache)
        try cache.close()
        #expect(throws: KVCacheError.closed) { try record(value, reserved, forKey: "big", in: cache) }
        #expect(dir.dataFiles().isEmpty)
    }
}
