/// The one error type the library throws: a `code` that says what went wrong, a
/// message, and, where known, the path, the key, the SQL, the system's error number
/// and the underlying error.
///
/// A struct rather than an enum, so that a new code breaks no client: switch over
/// `code` with a `default`, or match a code in a `catch`:
///
/// ```swift
/// do { try cache.setValue(data, forKey: key) }
/// catch KVCacheError.diskFull { /* make room */ }
/// ```
public struct KVCacheError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, such as `diskFull`.
        public let rawValue: String

        /// The code named `rawValue`; codes of the same name are equal.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The key is empty, too long, or otherwise unusable.
        public static let invalidKey = Code(rawValue: "invalidKey")
        /// An argument is out of range (a negative limit, a threshold below zero...).
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        /// SQLite reported an error (`sqliteResultCode`, `sql`).
        public static let sqlite = Code(rawValue: "sqlite")
        /// A file-system operation (`operation`) failed with `systemErrno`.
        public static let io = Code(rawValue: "io")
        /// The device holding the cache is full (ENOSPC / SQLITE_FULL).
        public static let diskFull = Code(rawValue: "diskFull")
        /// The cache directory could not be created or is not usable.
        public static let directoryUnavailable = Code(rawValue: "directoryUnavailable")
        /// Another cache instance in this process already has the directory open.
        public static let directoryInUse = Code(rawValue: "directoryInUse")
        /// The directory (or its manifest) holds something the cache did not create:
        /// another application's database, or files that are not the cache's. Nothing
        /// there was changed.
        public static let notACache = Code(rawValue: "notACache")
        /// The cache was opened read-only (`DiskCache.Configuration.isReadOnly`) and
        /// the call would change it.
        public static let readOnly = Code(rawValue: "readOnly")
        /// The manifest is damaged and the cache was opened read-only, so it was not
        /// rebuilt; `verify(repair: true)` (`kvcache verify --repair`) repairs it.
        public static let corrupt = Code(rawValue: "corrupt")
        /// A value could not be encoded by the coder (`underlyingError`).
        public static let encodingFailed = Code(rawValue: "encodingFailed")
        /// Stored bytes could not be decoded by the coder (`key`, `underlyingError`).
        public static let decodingFailed = Code(rawValue: "decodingFailed")
        /// The cache was closed.
        public static let closed = Code(rawValue: "closed")

        /// The code's name, such as `diskFull`.
        public var description: String { rawValue }

        /// True when `error` is a `KVCacheError` with this code: `catch KVCacheError.Code.diskFull`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? KVCacheError)?.code == code
        }
    }

    /// What went wrong.
    public var code: Code
    /// The specific reason, for people (the key's problem, SQLite's message...).
    public var message: String
    /// The file or directory concerned, if any.
    public var path: String?
    /// The key concerned, if any.
    public var key: String?
    /// SQLite's result code, for `.sqlite`.
    public var sqliteResultCode: Int32?
    /// The SQL that failed, if known.
    public var sql: String?
    /// The system call that failed, for `.io`.
    public var operation: String?
    /// The system's error number (`errno`), if a system call failed.
    public var systemErrno: Int32?
    /// The error this one reports, if any: a coder's `EncodingError` or `DecodingError`.
    public var underlyingError: (any Error & Sendable)?

    /// An error with `code` and `message`; the other fields as given.
    public init(code: Code, message: String, path: String? = nil, key: String? = nil,
                sqliteResultCode: Int32? = nil, sql: String? = nil, operation: String? = nil,
                systemErrno: Int32? = nil, underlyingError: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.key = key
        self.sqliteResultCode = sqliteResultCode
        self.sql = sql
        self.operation = operation
        self.systemErrno = systemErrno
        self.underlyingError = underlyingError
    }

    // MARK: - The errors the library throws

    /// `.invalidKey`: `reason` says what is wrong with the key.
    public static func invalidKey(reason: String) -> KVCacheError {
        KVCacheError(code: .invalidKey, message: reason)
    }

    /// `.invalidArgument`.
    public static func invalidArgument(_ message: String) -> KVCacheError {
        KVCacheError(code: .invalidArgument, message: message)
    }

    /// `.sqlite`, with SQLite's result code, message and the SQL if known.
    public static func sqlite(code: Int32, message: String, sql: String?) -> KVCacheError {
        KVCacheError(code: .sqlite, message: message, sqliteResultCode: code, sql: sql)
    }

    /// `.io`: `operation` failed for `path` with `errno`.
    public static func io(operation: String, path: String, errno: Int32) -> KVCacheError {
        KVCacheError(code: .io, message: "errno \(errno)", path: path, operation: operation, systemErrno: errno)
    }

    /// `.diskFull` at `path`.
    public static func diskFull(path: String) -> KVCacheError {
        KVCacheError(code: .diskFull, message: "disk full", path: path)
    }

    /// `.directoryUnavailable`: `path` could not be used, with `errno`.
    public static func directoryUnavailable(path: String, errno: Int32) -> KVCacheError {
        KVCacheError(code: .directoryUnavailable, message: "errno \(errno)", path: path, systemErrno: errno)
    }

    /// `.directoryInUse`.
    public static func directoryInUse(path: String) -> KVCacheError {
        KVCacheError(code: .directoryInUse, message: "already open in this process", path: path)
    }

    /// `.notACache`, with the reason.
    public static func notACache(path: String, reason: String) -> KVCacheError {
        KVCacheError(code: .notACache, message: reason, path: path)
    }

    /// `.readOnly`.
    public static func readOnly(path: String) -> KVCacheError {
        KVCacheError(code: .readOnly, message: "open read-only", path: path)
    }

    /// `.corrupt`, with SQLite's message.
    public static func corrupt(path: String, message: String) -> KVCacheError {
        KVCacheError(code: .corrupt, message: message, path: path)
    }

    /// `.encodingFailed`, with the coder's error.
    public static func encodingFailed(_ message: String, underlyingError: (any Error & Sendable)? = nil) -> KVCacheError {
        KVCacheError(code: .encodingFailed, message: message, underlyingError: underlyingError)
    }

    /// `.decodingFailed` for `key`, with the coder's error.
    public static func decodingFailed(key: String, message: String,
                                      underlyingError: (any Error & Sendable)? = nil) -> KVCacheError {
        KVCacheError(code: .decodingFailed, message: message, key: key, underlyingError: underlyingError)
    }

    /// `.closed`.
    public static let closed = KVCacheError(code: .closed, message: "the cache is closed")

    // MARK: - Matching

    /// True when `error` is a `KVCacheError` with the code of `pattern`: lets
    /// `catch KVCacheError.closed` match any error of that code.
    public static func ~= (pattern: KVCacheError, error: any Error) -> Bool {
        (error as? KVCacheError)?.code == pattern.code
    }

    /// Equal when every field but `underlyingError` is.
    public static func == (lhs: KVCacheError, rhs: KVCacheError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.path == rhs.path && lhs.key == rhs.key
            && lhs.sqliteResultCode == rhs.sqliteResultCode && lhs.sql == rhs.sql
            && lhs.operation == rhs.operation && lhs.systemErrno == rhs.systemErrno
    }

    /// Hashes the code, the message, the path and the key (consistent with `==`).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(path)
        hasher.combine(key)
    }

    /// A sentence for people: what went wrong and where, such as `disk full at /var/cache/app`.
    public var description: String {
        let path = path ?? "?"
        switch code {
        case .invalidKey: return "invalid key: \(message)"
        case .invalidArgument: return "invalid argument: \(message)"
        case .sqlite:
            return "SQLite error \(sqliteResultCode ?? 0): \(message)" + (sql.map { " (\($0))" } ?? "")
        case .io: return "\(operation ?? "an operation") failed for \(path): errno \(systemErrno ?? 0)"
        case .diskFull: return "disk full at \(path)"
        case .directoryUnavailable: return "cache directory unavailable: \(path) (errno \(systemErrno ?? 0))"
        case .directoryInUse: return "cache directory already open in this process: \(path)"
        case .notACache: return "not a KVCache directory: \(path) (\(message)); nothing was changed"
        case .readOnly: return "the cache at \(path) is open read-only"
        case .corrupt:
            return "the cache manifest \(path) is damaged (\(message)); repair it with verify(repair: true) (kvcache verify --repair)"
        case .encodingFailed: return "encoding failed: \(message)"
        case .decodingFailed: return "decoding the value for \(key ?? "?") failed: \(message)"
        case .closed: return "the cache is closed"
        default: return "\(code): \(message)" + (self.path.map { " (\($0))" } ?? "")
        }
    }
}
