/// Which level of a ``Cache`` answered a read.
public enum ValueSource: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The memory level.
    case memory
    /// The disk level; the value was promoted into memory.
    case disk
    /// The remote level; the value was stored in memory and on disk.
    case remote
    /// No level had a live value.
    case none

    /// The level's name: `memory`, `disk`, `remote` or `none`.
    public var description: String { rawValue }
}

/// The outcome of a ``Cache`` read: the value and the level it came from.
public enum CacheResult<Value: Sendable>: Sendable {
    /// A hit in the memory level.
    case memory(Value)
    /// A hit in the disk level; the value was promoted into memory.
    case disk(Value)
    /// A hit in the remote level; the value was stored in memory and on disk.
    case remote(Value)
    /// A miss: no level had a live value.
    case none

    /// The value found, or `nil` on a miss.
    public var value: Value? {
        switch self {
        case .memory(let value), .disk(let value), .remote(let value): return value
        case .none: return nil
        }
    }

    /// The level that answered.
    public var source: ValueSource {
        switch self {
        case .memory: return .memory
        case .disk: return .disk
        case .remote: return .remote
        case .none: return .none
        }
    }
}
