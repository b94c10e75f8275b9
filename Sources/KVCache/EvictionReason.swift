/// Why an entry left a cache level.
public enum EvictionReason: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The level held more entries than its count limit.
    case count
    /// The level held more total cost (memory) or bytes (disk) than its limit.
    case cost
    /// The entry was older than the age limit, or its expiration date passed.
    case expired
    /// The caller removed the entry (`removeValue(forKey:)`, `removeAll()`).
    case removed
    /// A new value was set for the same key.
    case replaced
    /// The level was trimmed in response to memory pressure or low disk space.
    case pressure

    /// The reason's name, as in the case: `count`, `cost`, `expired`...
    public var description: String { rawValue }
}
