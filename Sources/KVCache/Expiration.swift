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
    ///
    /// The same rule in every level: zero, a negative number or NaN has expired
    /// already (the entry is never returned); infinity is `.never`.
    case seconds(Double)
    /// The entry expires at this wall-clock date (a date with an infinite time
    /// interval since 1970 is `.never`; NaN has expired already).
    case date(Date)

    /// The entry expires this many days after it is stored.
    public static func days(_ days: Double) -> Expiration { .seconds(days * 86_400) }

    /// The absolute wall-clock deadline in seconds since 1970, or `nil` for `.never`
    /// (see `seconds(_:)` for zero, negative, NaN and infinite values).
    func deadline(from now: Double) -> Double? {
        switch self {
        case .never: return nil
        case .seconds(let seconds):
            if seconds == .infinity { return nil }
            return seconds > 0 ? now + seconds : now
        case .date(let date):
            let deadline = date.timeIntervalSince1970
            if deadline == .infinity { return nil }
            return deadline.isNaN ? now : deadline
        }
    }

    /// The lifetime that a read restarts when a level extends expiration on
    /// access: the seconds of `.seconds`, nil when there is none or it never ends.
    var extendableLifetime: Double? {
        guard case .seconds(let seconds) = self, seconds != .infinity else { return nil }
        return seconds > 0 ? seconds : 0
    }
}
