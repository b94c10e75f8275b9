import Foundation

/// When a cached entry stops being valid.
///
/// An expired entry is never returned; it is removed lazily on access and by
/// the periodic trim.
public enum Expiration: Sendable, Hashable {
    /// The entry never expires (it may still be evicted by the limits).
    case never
    /// The entry expires this many seconds after it is stored (or last
    /// accessed, when the level extends expiration on access).
    case seconds(Double)
    /// The entry expires at this wall-clock date.
    case date(Date)

    /// The entry expires this many days after it is stored.
    public static func days(_ days: Double) -> Expiration { .seconds(days * 86_400) }

    /// The absolute wall-clock deadline in seconds since 1970, or `nil` for `.never`.
    func deadline(from now: Double) -> Double? {
        switch self {
        case .never: return nil
        case .seconds(let seconds): return now + max(0, seconds)
        case .date(let date): return date.timeIntervalSince1970
        }
    }
}
