import CSQLite
import Foundation

/// A prepared statement. Bind parameters by 1-based index, step, read columns by
/// 0-based index. Every use goes through `run(_:)`, which resets the statement
/// afterwards: an unreset statement keeps its read transaction open and stops
/// WAL checkpoints from making progress (YYCache's WAL grew past 200 MB that way).
final class Statement {
    let sql: String
    let handle: OpaquePointer
    private unowned let database: Database

    init(database: Database, sql: String) throws {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw database.error(code, sql: sql)
        }
        self.sql = sql
        self.handle = statement
        self.database = database
    }

    /// Finalizes the statement; called by the owning database before it closes.
    func finalize() { sqlite3_finalize(handle) }

    /// Runs `body` and resets the statement whatever happens.
    @inline(__always)
    func run<Result>(_ body: (Statement) throws -> Result) rethrows -> Result {
        defer { sqlite3_reset(handle) }
        return try body(self)
    }

    /// Steps once; `true` when a row is available.
    @discardableResult
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error(code, sql: sql)
        }
    }

    /// Steps until done (for statements that return no rows).
    func execute() throws {
        while try step() {}
    }

    // MARK: Binding
    // Every bind's result is checked: SQLITE_TOOBIG (a blob over SQLite's length
    // limit) or SQLITE_RANGE must fail the statement, not bind NULL silently.

    /// Throws SQLite's error for a bind that did not return SQLITE_OK.
    @inline(__always)
    private func check(_ code: Int32) throws {
        if code != SQLITE_OK { throw database.error(code, sql: sql) }
    }

    func bind(_ value: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    func bind(_ value: Int, at index: Int32) throws {
        try check(sqlite3_bind_int64(handle, index, Int64(value)))
    }

    func bind(_ value: Double?, at index: Int32) throws {
        if let value {
            try check(sqlite3_bind_double(handle, index, value))
        } else {
            try check(sqlite3_bind_null(handle, index))
        }
    }

    func bind(_ value: String?, at index: Int32) throws {
        guard var value else {
            try check(sqlite3_bind_null(handle, index))
            return
        }
        // Explicit length: a key may contain NUL characters.
        let code = value.withUTF8 { bytes -> Int32 in
            guard let base = bytes.baseAddress, bytes.count <= Int32.max else {
                return bytes.isEmpty ? sqlite3_bind_text(handle, index, "", 0, kvcache_sqlite_transient()) : SQLITE_TOOBIG
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text(handle, index, $0, Int32(bytes.count), kvcache_sqlite_transient())
            }
        }
        try check(code)
    }

    func bind(_ value: Data?, at index: Int32) throws {
        guard let value else {
            try check(sqlite3_bind_null(handle, index))
            return
        }
        let code = value.withUnsafeBytes { bytes -> Int32 in
            if let base = bytes.baseAddress, bytes.count > 0 {
                return sqlite3_bind_blob64(handle, index, base, sqlite3_uint64(bytes.count), kvcache_sqlite_transient())
            }
            // A NULL pointer would bind SQL NULL; an empty blob must stay a blob.
            return sqlite3_bind_zeroblob(handle, index, 0)
        }
        try check(code)
    }

    /// Runs `body` with `text` bound at `index` in place (SQLITE_STATIC: no copy).
    /// The binding lives only inside `body`, which must step the statement and read
    /// its results there: afterwards the statement is reset and the parameter NULL
    /// again (a bind only takes effect on a reset statement).
    func withBorrowedText<Result>(_ text: String, at index: Int32, _ body: () throws -> Result) throws -> Result {
        var text = text
        return try text.withUTF8 { bytes in
            defer { unbind(index) }
            if let base = bytes.baseAddress {
                guard bytes.count <= Int32.max else { throw database.error(SQLITE_TOOBIG, sql: sql) }
                // Explicit length: a key may contain NUL characters.
                try check(base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    sqlite3_bind_text(handle, index, $0, Int32(bytes.count), nil)
                })
            } else {
                try check(sqlite3_bind_text(handle, index, "", 0, kvcache_sqlite_transient()))
            }
            return try body()
        }
    }

    /// Runs `body` with `data` (nil: NULL) bound at `index` in place, like `withBorrowedText`.
    func withBorrowedBlob<Result>(_ data: Data?, at index: Int32, _ body: () throws -> Result) throws -> Result {
        guard let data, !data.isEmpty else {
            try bind(data, at: index)
            return try body()
        }
        return try data.withUnsafeBytes { bytes in
            defer { unbind(index) }
            try check(sqlite3_bind_blob64(handle, index, bytes.baseAddress, sqlite3_uint64(bytes.count), nil))
            return try body()
        }
    }

    /// Resets the statement and sets parameter `index` back to NULL.
    private func unbind(_ index: Int32) {
        sqlite3_reset(handle)
        sqlite3_bind_null(handle, index)
    }

    // MARK: Columns

    func isNull(at column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    func int64(at column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    func double(at column: Int32) -> Double {
        sqlite3_column_double(handle, column)
    }

    func optionalDouble(at column: Int32) -> Double? {
        isNull(at: column) ? nil : sqlite3_column_double(handle, column)
    }

    func string(at column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The blob in `column`, or `nil` for SQL NULL. An empty blob is empty `Data`.
    func data(at column: Int32) -> Data? {
        if isNull(at: column) { return nil }
        // Per SQLite's rules: fetch the pointer first, then the size.
        let bytes = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let bytes, count > 0 else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}

/// Number of result columns of a statement (for tools and tests).
func sqlite3ColumnCount(_ statement: Statement) -> Int32 {
    sqlite3_column_count(statement.handle)
}
