import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store-level checks and repairs behind `DiskCache.verify` and
/// `DiskCache.inspect`. Each call is bounded (one page of rows, one chunk of
/// files) so the owner can release its lock between calls. Scans: for tools and
/// repair, never on a hot path.
extension KVStorage {
    /// What `PRAGMA integrity_check` reports, empty when the database is sound.
    func integrityErrors(limit: Int = 100) throws -> [String] {
        try Self.integrityErrors(on: requireDatabase(), limit: limit)
    }

    /// `integrityErrors` on any connection to the manifest.
    static func integrityErrors(on database: Database, limit: Int = 100) throws -> [String] {
        try database.statement("PRAGMA integrity_check(\(limit))").run { statement in
            var messages: [String] = []
            while try statement.step() {
                if let message = statement.string(at: 0), message != "ok" { messages.append(message) }
            }
            return messages
        }
    }

    /// Rebuilds the indexes, the repair for index-only damage (see `DiskCache.performWork`).
    static let reindexWork: DetachedCommit.Work = { transaction in
        try transaction.database.execute("REINDEX")
        return 0
    }

    /// Up to `limit` rows of file values whose file name sorts after `after`, in file name order.
    func fileRows(after: String?, limit: Int) throws -> [Victim] {
        try requireDatabase().statement(Manifest.selectFileRowsAfter).run { statement in
            try statement.bind(after ?? "", at: 1)
            try statement.bind(limit, at: 2)
            var rows: [Victim] = []
            while try statement.step() {
                rows.append(Victim(key: statement.string(at: 0) ?? "", filename: statement.string(at: 1),
                                   size: statement.int64(at: 2)))
            }
            return rows
        }
    }

    /// Up to `limit` inline rows, after `after` in key order, whose data is missing or
    /// not of the recorded size (a read treats them as misses).
    func damagedInlineRows(after: String?, limit: Int) throws -> (scanned: String?, rows: [DiskCache.DamagedEntry]) {
        let database = try requireDatabase()
        let last = try database.statement(Manifest.selectKeyAfterStep).run { statement -> String? in
            try statement.bind(after ?? "", at: 1)
            try statement.bind(limit - 1, at: 2)
            return try statement.step() ? statement.string(at: 0) : nil
        }
        let rows = try database.statement(Manifest.selectDamagedInlineRows).run { statement in
            try statement.bind(after ?? "", at: 1)
            try statement.bind(last, at: 2)
            var rows: [DiskCache.DamagedEntry] = []
            while try statement.step() {
                rows.append(DiskCache.DamagedEntry(key: statement.string(at: 0) ?? "", fileName: "",
                                                   expectedSize: statement.int64(at: 1),
                                                   actualSize: statement.isNull(at: 2) ? nil : statement.int64(at: 2)))
            }
            return rows
        }
        return (last, rows)
    }

    /// Deletes the damaged inline rows among `keys` that are still damaged, in one
    /// transaction (see `DiskCache.performWork`); returns how many went.
    static func removeDamagedInlineRowsWork(_ keys: [String]) -> DetachedCommit.Work {
        { transaction in
            var removed = 0
            let statement = try transaction.database.statement(Manifest.deleteDamagedInlineRow)
            for key in keys {
                let size = try statement.run { statement -> Int64? in
                    try statement.bind(key, at: 1)
                    return try statement.step() ? statement.int64(at: 0) : nil
                }
                guard let size else { continue }
                transaction.recordRemoved(size: size, file: nil)
                removed += 1
            }
            return removed
        }
    }

    enum FileCheck: Equatable {
        case intact
        case missing
        case wrongSize(Int64)
    }

    /// Whether the file `name` exists with `expectedSize` bytes (the file is not read).
    func checkFile(_ name: String, expectedSize: Int64) throws -> FileCheck {
        var info = stat()
        let path = files.path(name)
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return .missing }
            throw FileStore.error("lstat", path: path, errno: errno)
        }
        let size = Int64(info.st_size)
        return size == expectedSize ? .intact : .wrongSize(size)
    }

    /// Checks a row found broken again against the current manifest: another
    /// process may have replaced the value between the scan and the check.
    func confirmBroken(_ row: Victim) throws -> FileCheck {
        guard let filename = row.filename,
              let current = try storedMetadata(forKey: row.key), current.filename == filename else { return .intact }
        return try checkFile(filename, expectedSize: current.size)
    }

    /// Deletes each row that still names the given file (the file name is unique to one
    /// write), in one transaction (see `DiskCache.performWork`); the files go after the
    /// commit. Returns how many rows went.
    static func removeBrokenRowsWork(_ rows: [Victim]) -> DetachedCommit.Work {
        { transaction in
            var removed = 0
            let database = transaction.database
            let statement = try database.statement(Manifest.deleteKeyWithFile)
            for row in rows {
                guard let filename = row.filename else { continue }
                try statement.run { statement in
                    try statement.bind(row.key, at: 1)
                    try statement.bind(filename, at: 2)
                    try statement.execute()
                }
                guard database.changes > 0 else { continue }
                transaction.recordRemoved(size: row.size, file: filename)
                removed += 1
            }
            return removed
        }
    }

    /// The files among `names` that no row references and that this process is not writing.
    func unreferencedFiles(among names: [String]) throws -> [String] {
        let statement = try requireDatabase().statement(Manifest.fileIsReferenced)
        let pending = uncommittedFiles()
        return try names.filter { name in
            if pending.contains(name) { return false }
            return try !statement.run { statement in
                try statement.bind(name, at: 1)
                return try statement.step()
            }
        }
    }

    /// The stats row and the totals counted from the rows, read in one snapshot.
    func recordedAndCountedTotals() throws -> (recorded: Totals, counted: Totals) {
        try Self.recordedAndCountedTotals(on: requireDatabase())
    }

    /// `recordedAndCountedTotals` on any connection to the manifest.
    static func recordedAndCountedTotals(on database: Database) throws -> (recorded: Totals, counted: Totals) {
        try database.execute("BEGIN")
        do {
            let recorded = try database.statement(Manifest.selectStats).run { statement in
                guard try statement.step() else { return Totals.zero }
                return Totals(count: Int(statement.int64(at: 0)), size: statement.int64(at: 1),
                              fileCount: Int(statement.int64(at: 2)), fileSize: statement.int64(at: 3))
            }
            let counted = try database.statement(Manifest.countTotals).run { statement in
                guard try statement.step() else { return Totals.zero }
                return Totals(count: Int(statement.int64(at: 0)), size: statement.int64(at: 1),
                              fileCount: Int(statement.int64(at: 2)), fileSize: statement.int64(at: 3))
            }
            try database.execute("COMMIT")
            return (recorded, counted)
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            throw error
        }
    }

    /// Size in bytes of the file at `path`, or nil if it does not exist.
    static func fileSize(atPath path: String) -> Int64? {
        var info = stat()
        return lstat(path, &info) == 0 ? Int64(info.st_size) : nil
    }
}

extension Manifest {
    static let selectFileRowsAfter = """
        SELECT key, filename, size FROM manifest WHERE filename > ?1 ORDER BY filename LIMIT ?2
        """
    /// The key `?2` rows after `?1`: the end of one verification step over the keys.
    static let selectKeyAfterStep = "SELECT key FROM manifest WHERE key > ?1 ORDER BY key LIMIT 1 OFFSET ?2"
    /// Inline rows in (`?1`, `?2`] (to the end when `?2` is NULL) whose data is missing or of
    /// another size; length() of a blob reads no overflow pages.
    static let selectDamagedInlineRows = """
        SELECT key, size, length(inline_data) FROM manifest
        WHERE key > ?1 AND (?2 IS NULL OR key <= ?2) AND filename IS NULL
          AND (inline_data IS NULL OR length(inline_data) != size)
        """
    static let deleteDamagedInlineRow = """
        DELETE FROM manifest WHERE key = ?1 AND filename IS NULL
            AND (inline_data IS NULL OR length(inline_data) != size)
        RETURNING size
        """
    static let countTotals = """
        SELECT count(*), coalesce(sum(size), 0), count(filename),
               coalesce(sum(CASE WHEN filename IS NOT NULL THEN size ELSE 0 END), 0)
        FROM manifest
        """
    static let countExpired = """
        SELECT count(*) FROM manifest WHERE expiration_time IS NOT NULL AND expiration_time <= ?1
        """
    // Separate statements: SQLite answers a lone min() or max() from the index.
    static let selectOldestAccess = "SELECT min(last_access_time) FROM manifest"
}
