import Foundation

/// The outcome of a loading read (``Cache/result(forKey:expiration:refreshAfter:diskWrite:orCompute:)``):
/// the value and how it was obtained.
public enum LoadResult<Value: Sendable>: Sendable {
    /// A live value in the memory level.
    case memory(Value)
    /// A live value in the disk level; it was promoted into memory.
    case disk(Value)
    /// A live value in the remote level; it was stored in memory and on disk.
    case remote(Value)
    /// A value computed by this load (or by the concurrent load it joined), and stored.
    case computed(Value)
    /// An expired value served instead of the computation's `error` (fail-safe, see
    /// ``Cache/FailSafe``): it expired at `expiredAt`, and nothing was stored.
    case stale(Value, expiredAt: Date, error: any Error)

    /// A level's hit as a load's result; nil for a miss.
    init?(_ result: CacheResult<Value>) {
        switch result {
        case .memory(let value): self = .memory(value)
        case .disk(let value): self = .disk(value)
        case .remote(let value): self = .remote(value)
        case .none: return nil
        }
    }

    /// The value, live or stale.
    public var value: Value {
        switch self {
        case .memory(let value), .disk(let value), .remote(let value), .computed(let value),
             .stale(let value, _, _):
            return value
        }
    }

    /// Whether the value had expired and was served because the computation threw.
    public var isStale: Bool {
        if case .stale = self { return true }
        return false
    }
}

extension LoadResult {
    /// The span attribute naming where a load's value came from (package trait `Tracing`).
    static var levelAttribute: String { "kvcache.level" }
    /// The span attribute telling whether a load found its value in a level.
    static var hitAttribute: String { "kvcache.hit" }

    /// Where the value came from: `memory`, `disk`, `remote`, `computed` or `stale`.
    var level: String {
        switch self {
        case .memory: "memory"
        case .disk: "disk"
        case .remote: "remote"
        case .computed: "computed"
        case .stale: "stale"
        }
    }

    /// Whether a level held the value (a computed or stale value is a miss).
    var isHit: Bool {
        switch self {
        case .memory, .disk, .remote: true
        case .computed, .stale: false
        }
    }
}
