/// The one error type the library throws.
public enum KVCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key is empty, too long, or otherwise unusable; `reason` says which.
    case invalidKey(reason: String)
    /// An argument is out of range (a negative limit, a threshold below zero...).
    case invalidArgument(String)
    /// SQLite reported an error.
    case sqlite(code: Int32, message: String, sql: String?)
    /// A file-system operation failed with `errno`.
    case io(operation: String, path: String, errno: Int32)
    /// The device holding the cache is full (ENOSPC / SQLITE_FULL).
    case diskFull(path: String)
    /// The cache directory could not be created or is not usable.
    case directoryUnavailable(path: String, errno: Int32)
    /// Another cache instance in this process already has the directory open.
    case directoryInUse(path: String)
    /// The directory (or its manifest) holds something the cache did not create:
    /// another application's database, or files that are not the cache's. Nothing
    /// there was changed.
    case notACache(path: String, reason: String)
    /// The cache was opened read-only (`DiskCache.Configuration.isReadOnly`) and the
    /// call would change it.
    case readOnly(path: String)
    /// The manifest is damaged and the cache was opened read-only, so it was not
    /// rebuilt; `verify(repair: true)` (`kvcache verify --repair`) repairs it.
    case corrupt(path: String, message: String)
    /// A value could not be encoded by the coder.
    case encodingFailed(String)
    /// Stored bytes could not be decoded by the coder.
    case decodingFailed(key: String, message: String)
    /// The cache was closed.
    case closed

    public var description: String {
        switch self {
        case .invalidKey(let reason): return "invalid key: \(reason)"
        case .invalidArgument(let message): return "invalid argument: \(message)"
        case .sqlite(let code, let message, let sql):
            return "SQLite error \(code): \(message)" + (sql.map { " (\($0))" } ?? "")
        case .io(let operation, let path, let errno): return "\(operation) failed for \(path): errno \(errno)"
        case .diskFull(let path): return "disk full at \(path)"
        case .directoryUnavailable(let path, let errno): return "cache directory unavailable: \(path) (errno \(errno))"
        case .directoryInUse(let path): return "cache directory already open in this process: \(path)"
        case .notACache(let path, let reason): return "not a KVCache directory: \(path) (\(reason)); nothing was changed"
        case .readOnly(let path): return "the cache at \(path) is open read-only"
        case .corrupt(let path, let message):
            return "the cache manifest \(path) is damaged (\(message)); repair it with verify(repair: true) (kvcache verify --repair)"
        case .encodingFailed(let message): return "encoding failed: \(message)"
        case .decodingFailed(let key, let message): return "decoding the value for \(key) failed: \(message)"
        case .closed: return "the cache is closed"
        }
    }
}
