import Foundation

extension DiskCache {
    /// A snapshot of a cache directory for operators and tools: the ``Statistics``
    /// (what is stored and where, and this process's counters) and what only a look at
    /// the store tells: expired entries, how recently entries were used, and how big
    /// the manifest and its write-ahead log are.
    public struct Inspection: Sendable, Hashable {
        /// The cache directory (canonical path).
        public var directory = ""
        /// The counters since open and the store's totals, read in the same transaction
        /// as the rest of the inspection.
        public var statistics = Statistics()
        /// Entries past their expiration date that no trim has removed yet (they read as misses).
        public var expiredCount = 0
        /// The least recent access of any entry (to the access-time resolution);
        /// nil when the cache is empty.
        public var oldestAccess: Date?
        /// The most recent access of any entry (to the access-time resolution);
        /// nil when the cache is empty.
        public var newestAccess: Date?
        /// Bytes of `manifest.sqlite`.
        public var manifestSize: Int64 = 0
        /// Bytes of the write-ahead log (`manifest.sqlite-wal`); 0 when there is none.
        public var walSize: Int64 = 0
        /// The manifest's page size in bytes (SQLite's `page_size`).
        public var pageSize = 0
        /// The manifest's size in pages (SQLite's `page_count`).
        public var pageCount = 0
        /// The manifest's unused pages (SQLite's `freelist_count`).
        public var freePageCount = 0
        /// The manifest's schema version (`PRAGMA user_version`).
        public var schemaVersion = 0
        /// Bytes available to unprivileged users on the cache's file system, if known.
        public var freeDiskSpace: Int64?

        /// An empty snapshot, every figure 0; ``DiskCache/inspect()`` fills one in.
        public init() {}
    }

    /// Takes an `Inspection` snapshot. Commits pending writes first, then reads the
    /// maintained summary, the indexes and the page counts on a read connection: it does
    /// not scan the entries, and other callers' writes go on meanwhile.
    public func inspect() throws -> Inspection {
        // Not under the store's lock: a write held there does not hold this up, unless this
        // process has writes to commit first (their commit waits without the lock).
        if reader.buffer.mayHoldWrites { try perform(needs: .committed) { try $0.commit() } }
        let now = reader.options.clock()
        var (inspection, totals) = try read { reader, _ in
            try reader.pool.withConnection { try Inspection.read(from: $0.database, now: now) }
        }
        inspection.statistics = statistics(totals: totals)
        inspection.directory = path
        inspection.manifestSize = KVStorage.fileSize(atPath: reader.pool.path) ?? 0
        inspection.walSize = KVStorage.fileSize(atPath: reader.pool.path + "-wal") ?? 0
        inspection.freeDiskSpace = FileStore.freeSpace(at: path)
        return inspection
    }
}

extension DiskCache.Inspection {
    /// What the manifest says, and its totals, in one read transaction on `database`.
    static func read(from database: Database, now: Double) throws -> (Self, KVStorage.Totals) {
        var inspection = Self()
        let totals = try KVStorage.Totals.select(with: database.statement(Manifest.selectStats))
        try inspection.readDetails(from: database, now: now)
        return (inspection, totals)
    }

    private mutating func readDetails(from database: Database, now: Double) throws {
        expiredCount = try database.statement(Manifest.countExpired).run { statement in
            try statement.bind(now, at: 1)
            return try statement.step() ? Int(statement.int64(at: 0)) : 0
        }
        func first(_ sql: String) throws -> Double? {
            try database.statement(sql).run { statement in
                try statement.step() ? statement.optionalDouble(at: 0) : nil
            }
        }
        oldestAccess = try first(Manifest.selectOldestAccess).map(Date.init(timeIntervalSince1970:))
        newestAccess = try first(Manifest.selectNewestAccess).map(Date.init(timeIntervalSince1970:))
        pageSize = Int(try database.integer("PRAGMA page_size") ?? 0)
        pageCount = Int(try database.integer("PRAGMA page_count") ?? 0)
        freePageCount = Int(try database.integer("PRAGMA freelist_count") ?? 0)
        schemaVersion = Int(try database.integer("PRAGMA user_version") ?? 0)
    }
}
