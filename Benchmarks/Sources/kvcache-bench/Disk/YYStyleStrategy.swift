import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// YYKVStorage in mixed mode, as written: a SQLite manifest with an index on
/// last_access_time; values under 20 KB inline, larger ones in a file named by
/// MD5(key); every set its own autocommit transaction (with a lookup of the old
/// file name when storing inline); every get a SELECT plus an UPDATE of
/// last_access_time; trimming fetches the 16 oldest rows and deletes them one
/// autocommit at a time, until under the limit.
final class YYStyleStrategy: TrimmableDiskStrategy {
    static let kind = DiskStrategyKind(
        name: "YY-style (manifest)",
        open: { try YYStyleStrategy(directory: $0) },
        populate: { directory, count, value in
            // Only the layout matters for the open-time benchmark: fill in one transaction.
            let store = try YYStyleStrategy(directory: directory)
            try store.database.execute("BEGIN")
            for index in 0..<count { try store.setValue(value, forKey: DiskKeys.key(index)) }
            try store.database.execute("COMMIT")
            store.close()
        })

    static let inlineThreshold = 20 * 1024

    private let database: SQLiteDatabase
    private let dataPath: String
    private let save: SQLiteStatement
    private let selectItem: SQLiteStatement
    private let selectFilename: SQLiteStatement
    private let updateAccess: SQLiteStatement
    private let oldest: SQLiteStatement
    private let delete: SQLiteStatement
    private let count: SQLiteStatement

    init(directory: URL) throws {
        dataPath = directory.appendingPathComponent("data").path + "/"
        mkdir(dataPath, 0o755)
        database = try SQLiteDatabase(path: directory.appendingPathComponent("manifest.sqlite").path)
        try database.configureForCache()
        try database.execute("""
            CREATE TABLE IF NOT EXISTS manifest (key TEXT, filename TEXT, size INTEGER, inline_data BLOB,
                modification_time INTEGER, last_access_time INTEGER, extended_data BLOB, PRIMARY KEY(key));
            CREATE INDEX IF NOT EXISTS last_access_time_idx ON manifest(last_access_time);
            """)
        save = try database.prepare("""
            INSERT OR REPLACE INTO manifest (key, filename, size, inline_data, modification_time,
                last_access_time, extended_data) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """)
        selectItem = try database.prepare("""
            SELECT key, filename, size, inline_data, modification_time, last_access_time, extended_data
            FROM manifest WHERE key = ?1
            """)
        selectFilename = try database.prepare("SELECT filename FROM manifest WHERE key = ?1")
        updateAccess = try database.prepare("UPDATE manifest SET last_access_time = ?1 WHERE key = ?2")
        oldest = try database.prepare(
            "SELECT key, filename, size FROM manifest ORDER BY last_access_time ASC LIMIT ?1")
        delete = try database.prepare("DELETE FROM manifest WHERE key = ?1")
        count = try database.prepare("SELECT count(*) FROM manifest")
    }

    private static func now() -> Int64 { Int64(time(nil)) }

    func setValue(_ data: Data, forKey key: String) throws {
        var filename: String?
        if data.count >= Self.inlineThreshold {
            let name = FileName.md5(key)
            try FileIO.write(data, to: dataPath + name)
            filename = name
        } else if let old = try existingFilename(forKey: key) {
            FileIO.remove(dataPath + old)
        }
        defer { save.reset() }
        let now = Self.now()
        save.bind(1, key)
        if let filename { save.bind(2, filename) } else { save.bindNull(2) }
        save.bind(3, Int64(data.count))
        save.bind(5, now)
        save.bind(6, now)
        save.bindNull(7)
        if filename == nil {
            try save.withBlob(4, data) { try save.step() }
        } else {
            save.bindNull(4)
            try save.step()
        }
    }

    private func existingFilename(forKey key: String) throws -> String? {
        defer { selectFilename.reset() }
        selectFilename.bind(1, key)
        return try selectFilename.step() ? selectFilename.text(0) : nil
    }

    func value(forKey key: String) throws -> Data? {
        selectItem.bind(1, key)
        guard try selectItem.step() else {
            selectItem.reset()
            return nil
        }
        let filename = selectItem.text(1)
        let inline = filename == nil ? selectItem.data(3) : nil
        selectItem.reset()

        defer { updateAccess.reset() }
        updateAccess.bind(1, Self.now())
        updateAccess.bind(2, key)
        try updateAccess.step()

        if let filename { return try FileIO.read(dataPath + filename) }
        return inline
    }

    func flush() throws {}

    func trim(toCount limit: Int) throws {
        var total = try countRows()
        let perBatch: Int64 = 16
        while total > limit {
            var batch: [(key: String, filename: String?)] = []
            oldest.bind(1, perBatch)
            while try oldest.step() { batch.append((oldest.text(0) ?? "", oldest.text(1))) }
            oldest.reset()
            if batch.isEmpty { break }
            for item in batch where total > limit {
                if let filename = item.filename { FileIO.remove(dataPath + filename) }
                delete.bind(1, item.key)
                try delete.step()
                delete.reset()
                total -= 1
            }
        }
    }

    private func countRows() throws -> Int {
        defer { count.reset() }
        return try count.step() ? Int(count.int64(0)) : 0
    }

    func close() {}
}
