import Foundation

/// When a cached entry stops being valid.
///
/// An expired entry is never returned; it is removed lazily on access and by
/// the periodic trim. The same rules hold in every level.
public enum Expiration: Sendable, Hashable {
    /// The entry never expires (it may still be evicted by the limits).
    case never
    /// The entry expires this long after it is stored (or last read, where the
    /// level extends expiration on access). Zero or a negative duration has
    /// expired already: the entry is never returned.
    case after(Duration)
    /// The entry expires at this wall-clock date. A date in the past has expired
    /// already; a date an infinite interval after 1970 is `.never`, and one
    /// whose interval is NaN has expired already.
    case at(Date)

    /// The expiration of a stored deadline (seconds since 1970): `.never` for none
    /// (nil, or infinity as the memory level keeps it), else `.at` it.
    package init(deadline: Double?) {
        guard let deadline, deadline != .infinity else {
            self = .never
            return
        }
        self = .at(Date(timeIntervalSince1970: deadline))
    }

    /// The absolute wall-clock deadline in seconds since 1970, or `nil` for `.never`.
    package func deadline(from now: Double) -> Double? {
        switch self {
        case .never: return nil
        case .after(let duration):
            let seconds = duration.seconds
            return seconds > 0 ? now + seconds : now
        case .at(let date):
            let deadline = date.timeIntervalSince1970
            if deadline == .infinity { return nil }
            return deadline.isNaN ? now : deadline
        }
    }

    /// The lifetime that a read restarts when a level extends expiration on
    /// access: the seconds of `.after`, nil when there is none.
    var extendableLifetime: Double? {
        guard case .after(let duration) = self else { return nil }
        return max(0, duration.seconds)
    }
}
