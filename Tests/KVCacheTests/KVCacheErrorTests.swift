import CSQLite
import Foundation
import Testing
@testable import KVCache

/// `KVCacheError` is a struct with a code (issue 14): matched by code in a `catch`,
/// carrying the path, the SQL, the system's error number and the coder's error.
@Suite struct KVCacheErrorTests {
    @Test func aCatchMatchesByCode() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try cache.close()
        var matched = false
        do {
            try cache.setValue(Data([1]), forKey: "k")
        } catch KVCacheError.closed {
            matched = true
        }
        #expect(matched)
        do {
            _ = try cache.value(forKey: "")
        } catch KVCacheError.Code.invalidKey {
            matched = false
        } catch {}
        #expect(!matched)
    }

    @Test func sqliteErrorsKeepTheirResultCodeSQLAndPath() throws {
        let error = SQLiteError(extendedCode: SQLITE_MISUSE, message: "misuse", sql: "SELECT 1")
            .kvCacheError(path: "/tmp/x/manifest.sqlite")
        #expect(error.code == .sqlite && error.sqliteResultCode == SQLITE_MISUSE && error.sql == "SELECT 1")
        #expect(error.path == "/tmp/x/manifest.sqlite")
        #expect(error.description == "SQLite error \(SQLITE_MISUSE): misuse (SELECT 1)")
    }

    @Test func ioErrorsKeepTheOperationAndErrno() {
        let error = KVCacheError.io(operation: "open", path: "/p", errno: ENOENT)
        #expect(error.code == .io && error.operation == "open" && error.systemErrno == ENOENT && error.path == "/p")
        #expect(error.description == "open failed for /p: errno \(ENOENT)")
        #expect(error != KVCacheError.io(operation: "open", path: "/p", errno: EACCES))
    }

    /// A code this build does not know (a later version's) still reads and prints.
    @Test func aNewCodeBreaksNothing() {
        let error = KVCacheError(code: KVCacheError.Code(rawValue: "remoteUnavailable"), message: "timeout")
        #expect(error.description == "remoteUnavailable: timeout")
        switch error.code {
        case .closed: Issue.record("not closed")
        default: break
        }
    }
}
