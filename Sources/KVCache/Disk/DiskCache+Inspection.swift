import Foundation

extension DiskCache {
    /// A snapshot of a cache directory for operators and tools: what is stored, where,
    /// how recently it was used, and how big the manifest and its write-ahead log are.
    public struct Inspection: Sendable, Hashable {
        /// The cache directory (canonical path).
        public var directory = ""
        public var count = 0
        /// Bytes of all values.
        public var size: Int64 = 0
        /// Entries whose value lives in its manifest row, and their bytes.
        public var inlineCount = 0
        public var inlineSize: Int64 = 0
        /// Entries whose value lives in its own file, and their bytes.
        public var fileCount = 0
        public var fileSize: Int64 = 0
        /// Entries past their expiration date that no trim has removed yet (they read as misses).
        public var expiredCount = 0
        /// The least and the most recent access of any entry (to the access-time resolution);
        /// nil when the cache is empty.
        public var oldestAccess: Date?
        public var newestAccess: Date?
        /// Bytes of `manifest.sqlite` and of its write-ahead log (`manifest.sqlite-wal`).
        public var manifestSize: Int64 = 0
        public var walSize: Int64 = 0
        /// The manifest's page size, pages, and unused pages, in SQLite's terms.
        public var pageSize = 0
        public var pageCount = 0
        public var freePageCount = 0
        /// The manifest's schema version (`PRAGMA user_version`).
        public var schemaVersion = 0
        /// Bytes available to unprivileged users on the cache's file system, if known.
        public var freeDiskSpace: Int64?

        public init() {}
    }

    /// Takes an `Inspection` snapshot. Commits pending writes first; reads the maintained
    /// summary and indexes, so it does not scan the entries.
    public func inspect() throws -> Inspection {
        try perform { storage in
            let totals = try storage.totals()
            let database = try storage.requireDatabase()
            var inspection = Inspection()
            inspection.directory = storage.directory
            inspection.setTotals(totals)
            inspection.expiredCount = try storage.expiredRowCount()
            let range = try storage.accessTimeRange()
            inspection.oldestAccess = range.oldest.map(Date.init(timeIntervalSince1970:))
            inspection.newestAccess = range.newest.map(Date.init(timeIntervalSince1970:))
            inspection.manifestSize = KVStorage.fileSize(atPath: storage.manifestPath) ?? 0
            inspection.walSize = KVStorage.fileSize(atPath: storage.manifestPath + "-wal") ?? 0
            inspection.pageSize = Int(try database.integer("PRAGMA page_size") ?? 0)
            inspection.pageCount = Int(try database.integer("PRAGMA page_count") ?? 0)
            inspection.freePageCount = Int(try database.integer("PRAGMA freelist_count") ?? 0)
            inspection.schemaVersion = Int(try database.integer("PRAGMA user_version") ?? 0)
            inspection.freeDiskSpace = FileStore.freeSpace(at: storage.directory)
            return inspection
        }
    }
}
