/// The SQLite schema of a store and the SQL that uses it.
///
/// ```
/// manifest(key TEXT PRIMARY KEY,        -- the caller's key, compared byte-wise (UTF-8)
///          filename TEXT,               -- name in data/ for file values, NULL when inline
///          size INTEGER NOT NULL,       -- value size in bytes (64-bit)
///          modification_time REAL,      -- seconds since 1970
///          last_access_time REAL,       -- seconds since 1970, buffered (see AccessTimeBuffer)
///          expiration_time REAL,        -- absolute deadline, NULL = never
///          lifetime REAL,               -- seconds, for extend-on-access; NULL = not extendable
///          extended_data BLOB,
///          inline_data BLOB)            -- the value when inline; last so metadata reads skip it
/// stats(id = 1, count, size, file_count, file_size)  -- kept in the same transactions,
///                                                    -- so open and totals never scan
/// ```
/// `PRAGMA user_version` holds `Manifest.version`.
enum Manifest {
    /// Bump when the schema changes, and add a step to `migrations`.
    static let version: Int64 = 1
    /// `PRAGMA application_id` of our manifests: "KVCA" (see StoreOwnership).
    static let applicationID: Int32 = 0x4B56_4341

    /// SQL that moves version `n` to `n + 1`, indexed by `n` (0 = a new database).
    static let migrations: [String] = [
        """
        CREATE TABLE IF NOT EXISTS manifest (
            key TEXT PRIMARY KEY NOT NULL,
            filename TEXT,
            size INTEGER NOT NULL,
            modification_time REAL NOT NULL,
            last_access_time REAL NOT NULL,
            expiration_time REAL,
            lifetime REAL,
            extended_data BLOB,
            inline_data BLOB
        );
        CREATE INDEX IF NOT EXISTS manifest_last_access_time ON manifest(last_access_time);
        CREATE INDEX IF NOT EXISTS manifest_expiration_time ON manifest(expiration_time)
            WHERE expiration_time IS NOT NULL;
        CREATE INDEX IF NOT EXISTS manifest_filename ON manifest(filename)
            WHERE filename IS NOT NULL;
        CREATE TABLE IF NOT EXISTS stats (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            count INTEGER NOT NULL,
            size INTEGER NOT NULL,
            file_count INTEGER NOT NULL,
            file_size INTEGER NOT NULL
        );
        INSERT OR IGNORE INTO stats(id, count, size, file_count, file_size) VALUES (1, 0, 0, 0, 0);
        """,
    ]

    /// Settings each connection to a manifest sets for itself (WAL mode is in the file).
    ///
    /// `secure_delete = FAST`: deleted values are zeroed inside the pages a deletion
    /// writes anyway, but freed pages are not rewritten. Debian's SQLite is built with
    /// secure_delete on, which rewrites every freed page: a trim or removeAll of a
    /// megabyte of rows then writes a megabyte of zeros to the WAL, so on a full disk
    /// the deletion itself could not commit (and every trim costs that I/O).
    static func connectionPragmas(journalSizeLimit: Int64) -> String {
        """
        PRAGMA synchronous = NORMAL;
        PRAGMA secure_delete = FAST;
        PRAGMA cache_size = -16384;
        PRAGMA journal_size_limit = \(journalSizeLimit);
        """
    }

    static let selectValue = """
        SELECT filename, size, expiration_time, lifetime, last_access_time, inline_data
        FROM manifest WHERE key = ?1
        """
    static let selectMetadata = """
        SELECT filename, size, expiration_time, lifetime, last_access_time
        FROM manifest WHERE key = ?1
        """
    static let selectExtendedData = """
        SELECT extended_data, expiration_time, lifetime, last_access_time FROM manifest WHERE key = ?1
        """
    static let upsert = """
        INSERT INTO manifest(key, filename, size, modification_time, last_access_time,
                             expiration_time, lifetime, extended_data, inline_data)
        VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8)
        ON CONFLICT(key) DO UPDATE SET
            filename = excluded.filename, size = excluded.size,
            modification_time = excluded.modification_time, last_access_time = excluded.last_access_time,
            expiration_time = excluded.expiration_time, lifetime = excluded.lifetime,
            extended_data = excluded.extended_data, inline_data = excluded.inline_data
        """
    /// Inserts a new key; does nothing (0 changes) if the key exists, so new keys
    /// cost one statement and only replacements look up the old row.
    static let insertNew = """
        INSERT INTO manifest(key, filename, size, modification_time, last_access_time,
                             expiration_time, lifetime, extended_data, inline_data)
        VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8)
        ON CONFLICT(key) DO NOTHING
        """
    static let deleteKey = "DELETE FROM manifest WHERE key = ?1"
    /// Removes a broken row only if it still names the broken file (another
    /// process may have replaced the value meanwhile).
    static let deleteKeyWithFile = "DELETE FROM manifest WHERE key = ?1 AND filename = ?2"
    static let updateAccessTime = """
        UPDATE manifest SET last_access_time = ?1,
            expiration_time = CASE WHEN ?2 AND lifetime IS NOT NULL THEN ?1 + lifetime ELSE expiration_time END
        WHERE key = ?3
        """
    static let selectStats = "SELECT count, size, file_count, file_size FROM stats WHERE id = 1"
    static let addToStats = """
        UPDATE stats SET count = count + ?1, size = size + ?2,
            file_count = file_count + ?3, file_size = file_size + ?4 WHERE id = 1
        """
    static let recomputeStats = """
        UPDATE stats SET
            count = (SELECT count(*) FROM manifest),
            size = (SELECT coalesce(sum(size), 0) FROM manifest),
            file_count = (SELECT count(*) FROM manifest WHERE filename IS NOT NULL),
            file_size = (SELECT coalesce(sum(size), 0) FROM manifest WHERE filename IS NOT NULL)
        WHERE id = 1
        """
    // Trim steps: one statement deletes the rows and returns what the step must
    // account for (sizes for the stats row, files to delete after the commit).
    static let deleteOldest = """
        DELETE FROM manifest WHERE rowid IN
            (SELECT rowid FROM manifest ORDER BY last_access_time LIMIT ?1)
        RETURNING filename, size, key
        """
    /// Sizes of the oldest rows, in the order `deleteOldest` takes them (same index).
    static let selectOldestSizes = "SELECT size FROM manifest ORDER BY last_access_time LIMIT ?1"
    static let deleteAccessedBefore = """
        DELETE FROM manifest WHERE rowid IN
            (SELECT rowid FROM manifest WHERE last_access_time < ?1 ORDER BY last_access_time LIMIT ?2)
        RETURNING filename, size, key
        """
    static let deleteExpired = """
        DELETE FROM manifest WHERE rowid IN
            (SELECT rowid FROM manifest WHERE expiration_time IS NOT NULL AND expiration_time <= ?1 LIMIT ?2)
        RETURNING filename, size, key
        """
    /// Up to ?3 rows whose key is at least ?1 and (if `bounded`) below ?2: one range of
    /// the primary key, the keys with a prefix.
    static func deleteKeyRange(bounded: Bool) -> String {
        """
        DELETE FROM manifest WHERE rowid IN
            (SELECT rowid FROM manifest WHERE key >= ?1\(bounded ? " AND key < ?2" : "") LIMIT ?3)
        RETURNING filename, size, key
        """
    }
    /// Sets ?1's expiration (?2) and extendable lifetime (?3) if it has not expired at ?4.
    static let updateExpiration = """
        UPDATE manifest SET expiration_time = ?2, lifetime = ?3
        WHERE key = ?1 AND (expiration_time IS NULL OR expiration_time > ?4)
        """
    static let deleteAny = """
        DELETE FROM manifest WHERE rowid IN (SELECT rowid FROM manifest LIMIT ?1) RETURNING filename, size, key
        """
    /// Keys from ?1 (after it unless `inclusive`), below ?2 if `bounded`, not expired
    /// at the next parameter, up to the last one's count, in key order.
    static func selectKeys(inclusive: Bool, bounded: Bool) -> String {
        let (now, limit) = bounded ? ("?3", "?4") : ("?2", "?3")
        return """
            SELECT key FROM manifest WHERE key \(inclusive ? ">=" : ">") ?1\(bounded ? " AND key < ?2" : "")
                AND (expiration_time IS NULL OR expiration_time > \(now)) ORDER BY key LIMIT \(limit)
            """
    }
    static let selectNewestAccess = "SELECT max(last_access_time) FROM manifest"
    static let fileIsReferenced = "SELECT 1 FROM manifest WHERE filename = ?1 LIMIT 1"
    static let deleteAll = "DELETE FROM manifest"
    static let deleteAllReturningKeys = "DELETE FROM manifest RETURNING key"
    static let resetStats = "UPDATE stats SET count = 0, size = 0, file_count = 0, file_size = 0 WHERE id = 1"
}
