import CSQLite
import Foundation

/// One SQLite connection with a cache of prepared statements.
///
/// Not thread-safe: the owner serializes access (the connection is opened with
/// `SQLITE_OPEN_NOMUTEX`, since the store already holds a lock around it).
final class Database {
    let path: String
    /// Seconds a statement waits for another connection's lock before it is busy.
    let busyTimeout: Double
    private(set) var handle: OpaquePointer?
    private var statements: [String: Statement] = [:]
    /// The context of a hook installed on this connection (SQLite holds it
    /// unretained): kept alive exactly as long as the connection.
    var hookContext: AnyObject?

    /// Opens the database at `path`, creating it if needed unless `create` is false;
    /// `readOnly` opens it with SQLITE_OPEN_READONLY (never created).
    init(path: String, busyTimeout: Double, create: Bool = true, readOnly: Bool = false) throws {
        self.path = path
        self.busyTimeout = busyTimeout
        _ = Self.processSettings
        var connection: OpaquePointer?
        // NOFOLLOW: a manifest replaced by a symlink is refused (SQLITE_CANTOPEN), never followed.
        let access = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
        let flags = access | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        let code = sqlite3_open_v2(path, &connection, flags, nil)
        handle = connection
        guard code == SQLITE_OK else {
            let error = self.error(code, sql: nil)
            close()
            throw error
        }
        sqlite3_extended_result_codes(connection, 1)
        sqlite3_busy_timeout(connection, Seconds.clampedMilliseconds(busyTimeout))
    }

    deinit { close() }

    /// Runs `body` with the busy handler off: a lock held by another connection is
    /// `SQLITE_BUSY` at once instead of a wait of up to `busyTimeout`.
    func withoutBusyWait<Result>(_ body: () throws -> Result) rethrows -> Result {
        sqlite3_busy_timeout(handle, 0)
        defer { sqlite3_busy_timeout(handle, Seconds.clampedMilliseconds(busyTimeout)) }
        return try body()
    }

    /// SQLite's process-wide settings, applied once before its first connection: no
    /// memory statistics (their mutex serializes every allocation of every connection).
    private static let processSettings: Void = {
        _ = kvcache_sqlite_disable_memstatus()
    }()

    /// SQLite's limit on the bytes of one string, blob or row (`SQLITE_LIMIT_LENGTH`,
    /// 1,000,000,000 unless the library was built otherwise).
    static let lengthLimit: Int = {
        _ = processSettings
        var connection: OpaquePointer?
        defer { sqlite3_close_v2(connection) }
        guard sqlite3_open_v2(":memory:", &connection, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
            return 1_000_000_000
        }
        return Int(sqlite3_limit(connection, SQLITE_LIMIT_LENGTH, -1))
    }()

    /// Finalizes every cached statement and closes the connection.
    func close() {
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Builds an error from `code`, SQLite's current message and `sql`.
    func error(_ code: Int32, sql: String?) -> SQLiteError {
        let extended = handle.map { sqlite3_extended_errcode($0) } ?? code
        // The connection's code may belong to an earlier call; trust `code` when they disagree.
        let resolved = (extended & 0xff) == (code & 0xff) ? extended : code
        let message = handle.flatMap { sqlite3_errmsg($0).map { String(cString: $0) } }
            ?? String(cString: sqlite3_errstr(code))
        var error = SQLiteError(extendedCode: resolved, message: message, sql: sql)
        if let handle { error.systemErrno = sqlite3_system_errno(handle) }
        return error
    }

    /// The cached prepared statement for `sql`, preparing it on first use.
    func statement(_ sql: String) throws -> Statement {
        if let statement = statements[sql] { return statement }
        let statement = try Statement(database: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Runs SQL without parameters or results (pragmas, DDL); may hold several statements.
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if let message { sqlite3_free(message) }
        guard code == SQLITE_OK else { throw error(code, sql: sql) }
    }

    /// The first column of the first row of `sql`, as an integer.
    func integer(_ sql: String) throws -> Int64? {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK else { throw error(code, sql: sql) }
        defer { sqlite3_finalize(statement) }
        let step = sqlite3_step(statement)
        switch step {
        case SQLITE_ROW:
            return sqlite3_column_type(statement, 0) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, 0)
        case SQLITE_DONE:
            return nil
        default:
            throw error(step, sql: sql)
        }
    }

    /// True inside an explicit transaction (SQLite may end one by itself after
    /// SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM or SQLITE_BUSY).
    var isInTransaction: Bool {
        guard let handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Number of cached prepared statements.
    var cachedStatementCount: Int { statements.count }

    /// Prepared statements of this connection that were stepped and not reset.
    var busyStatementCount: Int {
        var count = 0
        var statement = sqlite3_next_stmt(handle, nil)
        while let current = statement {
            if sqlite3_stmt_busy(current) != 0 { count += 1 }
            statement = sqlite3_next_stmt(handle, current)
        }
        return count
    }
}
