import CSQLite

/// An error reported by SQLite: the result code, SQLite's message and the SQL
/// that failed. Mapped to `KVCacheError` at the storage boundary.
struct SQLiteError: Error, CustomStringConvertible {
    /// The extended result code (`sqlite3_extended_errcode`).
    var extendedCode: Int32
    var message: String
    var sql: String?

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_FULL`...).
    var code: Int32 { extendedCode & 0xff }

    /// The file is not a database or its pages are damaged: the store is rebuilt.
    var isCorruption: Bool { code == SQLITE_CORRUPT || code == SQLITE_NOTADB }

    var description: String {
        "SQLite error \(extendedCode): \(message)" + (sql.map { " (\($0))" } ?? "")
    }

    /// The library's error: `diskFull` for SQLITE_FULL, otherwise `sqlite(code:message:sql:)`
    /// with the primary code (the extended code is kept in the message when it differs).
    func kvCacheError(path: String) -> KVCacheError {
        if code == SQLITE_FULL { return .diskFull(path: path) }
        let text = extendedCode == code ? message : "\(message) (extended code \(extendedCode))"
        return .sqlite(code: code, message: text, sql: sql)
    }
}
