import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error reported by SQLite: the result code, SQLite's message and the SQL
/// that failed. Mapped to `KVCacheError` at the storage boundary.
struct SQLiteError: Error, CustomStringConvertible {
    /// The extended result code (`sqlite3_extended_errcode`).
    var extendedCode: Int32
    var message: String
    var sql: String?
    /// The OS error behind an I/O error (`sqlite3_system_errno`), 0 if none.
    var systemErrno: Int32 = 0

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_FULL`...).
    var code: Int32 { extendedCode & 0xff }

    /// The file is not a database or its pages are damaged: the store is rebuilt.
    var isCorruption: Bool { code == SQLITE_CORRUPT || code == SQLITE_NOTADB }

    /// SQLITE_FULL, or an I/O error whose cause was ENOSPC/EDQUOT: on a full disk SQLite
    /// reports growing the shared-memory file (-shm) as SQLITE_IOERR_SHMSIZE, for one.
    var isDiskFull: Bool {
        code == SQLITE_FULL || (code == SQLITE_IOERR && (systemErrno == ENOSPC || systemErrno == EDQUOT))
    }

    var description: String {
        "SQLite error \(extendedCode): \(message)" + (sql.map { " (\($0))" } ?? "")
    }

    /// The library's error: `diskFull` for SQLITE_FULL, otherwise `.sqlite` with the
    /// primary code (the extended code is kept in the message when it differs), the SQL
    /// and the manifest's path.
    func kvCacheError(path: String) -> KVCacheError {
        if isDiskFull { return .diskFull(path: path) }
        let text = extendedCode == code ? message : "\(message) (extended code \(extendedCode))"
        var error = KVCacheError.sqlite(code: code, message: text, sql: sql)
        error.path = path
        if systemErrno != 0 { error.systemErrno = systemErrno }
        return error
    }
}
