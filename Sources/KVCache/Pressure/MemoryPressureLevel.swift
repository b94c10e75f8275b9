/// How short of memory the system (or the process's cgroup) is.
public enum MemoryPressureLevel: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// No pressure worth acting on.
    case normal
    /// Tasks spend noticeable time waiting for memory (PSI `some`): caches should shrink.
    case warning
    /// All running tasks stall on memory at once (PSI `full`): caches should let go of what they can.
    case critical

    /// The level's name: `normal`, `warning` or `critical`.
    public var description: String {
        switch self {
        case .normal: return "normal"
        case .warning: return "warning"
        case .critical: return "critical"
        }
    }
}
