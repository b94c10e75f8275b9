import Foundation

/// The SQLite floor: one table, prepared statements, every value inline,
/// `INSERT OR REPLACE` committed in batches of 1,000, `SELECT` by key. No
/// access times, no files, no limits.
final class RawSQLiteStrategy: TrimmableDiskStrategy {
    static let kind = DiskStrategyKind(
        name: "raw sqlite3", isFloor: true,
        open: { try RawSQLiteStrategy(directory: $0) },
        populate: { directory, count, value in
            let store = try RawSQLiteStrategy(directory: directory)
            for index in 0..<count { try store.setValue(value, forKey: DiskKeys.key(index)) }
            try store.flush()
            store.close()
        })

    static let batchSize = 1_000

    private var database: SQLiteDatabase?
    private let insert: SQLiteStatement
    private let select: SQLiteStatement
    private let trimOldest: SQLiteStatement
    private var pendingInTransaction = 0

    init(directory: URL) throws {
        let database = try SQLiteDatabase(path: directory.appendingPathComponent("raw.sqlite").path)
        try database.configureForCache()
        try database.execute("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL)")
        insert = try database.prepare("INSERT OR REPLACE INTO kv (key, value) VALUES (?1, ?2)")
        select = try database.prepare("SELECT value FROM kv WHERE key = ?1")
        // Insertion order (rowid) stands in for age: the floor keeps no access times.
        trimOldest = try database.prepare(
            "DELETE FROM kv WHERE rowid IN (SELECT rowid FROM kv ORDER BY rowid LIMIT ?1)")
        self.database = database
    }

    func setValue(_ data: Data, forKey key: String) throws {
        if pendingInTransaction == 0 { try database?.execute("BEGIN") }
        defer { insert.reset() }
        insert.bind(1, key)
        try insert.withBlob(2, data) { try insert.step() }
        pendingInTransaction += 1
        if pendingInTransaction >= Self.batchSize { try flush() }
    }

    func value(forKey key: String) throws -> Data? {
        defer { select.reset() }
        select.bind(1, key)
        return try select.step() ? select.data(0) : nil
    }

    func flush() throws {
        guard pendingInTransaction > 0 else { return }
        pendingInTransaction = 0
        try database?.execute("COMMIT")
    }

    func trim(toCount count: Int) throws {
        try flush()
        let current = try countRows()
        guard current > count else { return }
        defer { trimOldest.reset() }
        trimOldest.bind(1, Int64(current - count))
        try trimOldest.step()
    }

    private func countRows() throws -> Int {
        guard let database else { return 0 }
        let statement = try database.prepare("SELECT count(*) FROM kv")
        return try statement.step() ? Int(statement.int64(0)) : 0
    }

    func close() {
        try? flush()
        database = nil
    }
}

/// Keys used by the disk benchmarks: short, unique, safe as file names.
enum DiskKeys {
    static func key(_ index: Int) -> String { "key-\(index)" }
    static func missingKey(_ index: Int) -> String { "missing-\(index)" }
}
