#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What in a directory is the cache's own: the checks that keep a store from
/// adopting, changing or deleting what it did not create.
///
/// Our manifests carry `PRAGMA application_id = Manifest.applicationID`; ones made
/// before the mark are recognised by their schema and marked when opened
/// read-write. A directory without a manifest may hold only the names a store
/// makes; the data folder only names that `FileNameHash.fileName` makes.
enum StoreOwnership {
    /// The entries a store creates at the top of its directory.
    static let topLevelNames: Set<String> = [
        "manifest.sqlite", "manifest.sqlite-wal", "manifest.sqlite-shm", "manifest.sqlite-journal",
        "data", "trash", "corrupt", KVStorage.reserveFileName,
    ]

    /// Whether the manifest exists. A symlink, directory or other non-file in its
    /// place is refused: it is not ours, and SQLite would follow or fail on it.
    static func manifestExists(at path: String) throws -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return false }
            throw KVCacheError.directoryUnavailable(path: path, errno: errno)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return true
        case S_IFLNK: throw KVCacheError.directoryUnavailable(path: path, errno: ELOOP)
        case S_IFDIR: throw KVCacheError.directoryUnavailable(path: path, errno: EISDIR)
        default: throw KVCacheError.directoryUnavailable(path: path, errno: EINVAL)
        }
    }

    /// For a directory with no manifest: throws `notACache` if it holds anything a
    /// store would not have made (at the top, or in `data/`).
    static func requireOnlyStoreEntries(in directory: String) throws {
        let entries = try FileStore.entries(of: directory)
        if let foreign = entries.first(where: { !topLevelNames.contains($0.name) }) {
            throw KVCacheError.notACache(path: directory, reason: "it holds \"\(foreign.name)\", which the cache did not create")
        }
        guard entries.contains(where: { $0.name == "data" && $0.isDirectory }) else { return }
        if let foreign = try FileStore.entries(of: directory + "/data").first(where: { !FileNameHash.isFileName($0.name) }) {
            throw KVCacheError.notACache(path: directory + "/data",
                                         reason: "it holds \"\(foreign.name)\", which the cache did not create")
        }
    }

    /// How an existing manifest stands.
    enum Mark: Equatable {
        /// Marked as ours.
        case marked
        /// Ours from before the mark (our schema, application_id 0): mark it when writable.
        case unmarked
        /// An empty database (a store whose creation did not finish): ours to set up.
        case empty
    }

    /// Throws `notACache` for a database that another application made.
    static func check(_ database: Database) throws -> Mark {
        let applicationID = try database.integer("PRAGMA application_id") ?? 0
        if applicationID == Int64(Manifest.applicationID) { return .marked }
        let reason: String
        if applicationID == 0 {
            let version = try database.integer("PRAGMA user_version") ?? 0
            let objects = try database.integer("SELECT count(*) FROM sqlite_master") ?? 0
            if version == 0 && objects == 0 { return .empty }
            let ourTables = try database.integer(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('manifest', 'stats')") ?? 0
            if (1...Manifest.version).contains(version) && ourTables == 2 { return .unmarked }
            reason = "its manifest is another application's SQLite database"
        } else {
            reason = "its manifest is another application's SQLite database (application_id \(applicationID))"
        }
        throw KVCacheError.notACache(path: database.path, reason: reason)
    }
}
