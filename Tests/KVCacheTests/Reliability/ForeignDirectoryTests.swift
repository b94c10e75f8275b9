import CSQLite
import Foundation
import Testing
@testable import KVCache

/// Directories and databases the cache did not create are never adopted or changed
/// (issue 12, item 7): opening a store on a directory whose `data/` held other files
/// deleted them after the grace period, and `kvcache stats` on another application's
/// SQLite database added our tables to it and created `data/` and `trash/`.
@Suite struct ForeignDirectoryTests {
    /// Everything under `path`, relative, with file sizes: what "unchanged" compares.
    static func listing(_ path: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: path)
        var items: [String] = []
        while let item = enumerator?.nextObject() as? String {
            items.append("\(item):\(fileSize(path + "/" + item) ?? -1)")
        }
        return items.sorted()
    }

    @Test func aDataFolderWithOtherFilesIsRefusedAndLeftAsItIs() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.dataPath, withIntermediateDirectories: true)
        let photo = URL(fileURLWithPath: dir.dataPath + "/photo.jpg")
        try Data([1, 2, 3]).write(to: photo)
        // Older than any grace period.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 0)], ofItemAtPath: photo.path)
        let before = Self.listing(dir.path)
        #expect {
            _ = try DiskCache(directory: dir.url, configuration: .testing())
        } throws: { error in
            guard let error = error as? KVCacheError, error.code == .notACache else { return false }
            return error.path?.hasSuffix("/data") == true && error.message.contains("photo.jpg")
        }
        #expect(Self.listing(dir.path) == before)
    }

    @Test func aDirectoryWithOtherFilesIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: dir.url.appendingPathComponent("notes.txt"))
        let before = Self.listing(dir.path)
        #expect(throws: KVCacheError.self) { _ = try DiskCache(directory: dir.url, configuration: .testing()) }
        #expect(Self.listing(dir.path) == before)
        // A read-only open creates nothing either.
        #expect(throws: KVCacheError.self) {
            _ = try DiskCache(directory: dir.url, configuration: .testing { $0.isReadOnly = true })
        }
        #expect(Self.listing(dir.path) == before)
    }

    @Test func anotherApplicationsDatabaseIsRefusedUnchanged() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        do {
            let other = try Database(path: dir.manifestPath, busyTimeout: 1)
            try other.execute("CREATE TABLE users(name TEXT); INSERT INTO users VALUES ('ada');")
            other.close()
        }
        let before = Self.listing(dir.path)
        let bytesBefore = try Data(contentsOf: URL(fileURLWithPath: dir.manifestPath))
        for readOnly in [false, true] {
            #expect {
                _ = try DiskCache(directory: dir.url, configuration: .testing { $0.isReadOnly = readOnly })
            } throws: { error in
                (error as? KVCacheError)?.code == .notACache
            }
        }
        #expect(Self.listing(dir.path) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.manifestPath)) == bytesBefore)
        #expect(try rawRows(dir.manifestPath, "SELECT name FROM sqlite_master ORDER BY name") == [["users"]])
        // Marked by another application: refused too.
        _ = try rawRows(dir.manifestPath, "PRAGMA application_id = 42")
        #expect(throws: KVCacheError.self) { _ = try DiskCache(directory: dir.url, configuration: .testing()) }
    }

    @Test func ourManifestsAreMarkedAndOnesFromBeforeTheMarkAreAdopted() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let cache = try DiskCache(directory: dir.url, configuration: .testing())
            try cache.setValue(bytes(10), forKey: "k")
            try cache.close()
        }
        #expect(try rawRows(dir.manifestPath, "PRAGMA application_id") == [["\(Manifest.applicationID)"]])
        // A store made before the mark existed: recognised by its schema, and marked.
        _ = try rawRows(dir.manifestPath, "PRAGMA application_id = 0")
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        #expect(try cache.value(forKey: "k") == bytes(10))
        try cache.close()
        #expect(try rawRows(dir.manifestPath, "PRAGMA application_id") == [["\(Manifest.applicationID)"]])
    }

    @Test func aManifestThatIsASymlinkOrADirectoryIsAnUnavailableDirectory() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.manifestPath, withDestinationPath: "/etc/hostname")
        #expect(throws: KVCacheError.directoryUnavailable(path: dir.manifestPath, errno: ELOOP)) {
            _ = try DiskCache(directory: dir.url, configuration: .testing())
        }
        try FileManager.default.removeItem(atPath: dir.manifestPath)
        try FileManager.default.createDirectory(atPath: dir.manifestPath, withIntermediateDirectories: true)
        #expect(throws: KVCacheError.directoryUnavailable(path: dir.manifestPath, errno: EISDIR)) {
            _ = try DiskCache(directory: dir.url, configuration: .testing())
        }
    }

    @Test func filesTheStoreDidNotNameAreNeverSweptOrTrashed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try cache.setValue(bytes(30_000), forKey: "file")
        try cache.flush()
        // Put there after the store was made: still not the store's.
        let stray = dir.dataPath + "/keep-me.txt"
        try Data([7]).write(to: URL(fileURLWithPath: stray))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 0)], ofItemAtPath: stray)
        #expect(try cache.sweepOrphans(gracePeriod: .seconds(0)) == 0)
        #expect(try cache.verify(repair: true, orphanGracePeriod: .seconds(0)).orphanFiles.isEmpty)
        // removeAll moves data/ to the trash and deletes only the store's files from it.
        try cache.removeAll()
        cache.waitForBackgroundWork()
        let trashed = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/trash")
        #expect(trashed.count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/trash/" + trashed[0]) == ["keep-me.txt"])
        try cache.close()
    }
}
