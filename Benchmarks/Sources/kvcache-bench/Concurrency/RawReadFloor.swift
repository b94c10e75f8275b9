import BenchSQLite
import Foundation

/// The floor for disk get hits: `SELECT v FROM t WHERE k = ?` on a table like the
/// manifest (TEXT primary key, 16 KiB pages, WAL), one connection per worker, each
/// read either in a read transaction of its own (as SQLite does by itself) or all
/// of a worker's reads in one (what a connection that keeps its snapshot costs).
final class RawReadFloor: @unchecked Sendable {
    private final class Connection {
        let database: SQLiteDatabase
        let select: SQLiteStatement
        var isInTransaction = false

        init(path: String) throws {
            database = try SQLiteDatabase(path: path)
            try database.execute("PRAGMA cache_size = -16384")
            select = try database.prepare("SELECT v FROM t WHERE k = ?1")
        }
    }

    private let connections: [Connection]

    init(directory: URL, keys: Int, value: Data, connections count: Int) throws {
        let path = directory.appendingPathComponent("raw-floor.sqlite").path
        let writer = try SQLiteDatabase(path: path)
        try writer.execute("PRAGMA page_size = 16384")
        try writer.configureForCache()
        try writer.execute("CREATE TABLE t (k TEXT PRIMARY KEY NOT NULL, v BLOB); BEGIN")
        let insert = try writer.prepare("INSERT INTO t VALUES (?1, ?2)")
        for index in 0..<keys {
            insert.bind(1, "k\(index)")
            try insert.withBlob(2, value) { try insert.step() }
            insert.reset()
        }
        try writer.execute("COMMIT")
        connections = try (0..<count).map { _ in try Connection(path: path) }
    }

    /// One read on the worker's own connection (only that worker calls this with its index).
    func read(worker: Int, key: String, keepsTransaction: Bool) -> Bool {
        let connection = connections[worker]
        if keepsTransaction != connection.isInTransaction {
            try? connection.database.execute(keepsTransaction ? "BEGIN" : "COMMIT")
            connection.isInTransaction = keepsTransaction
        }
        let select = connection.select
        select.bind(1, key)
        defer { select.reset() }
        guard (try? select.step()) == true else { return false }
        return !select.data(0).isEmpty
    }
}
