#if Vapor
import KVCache
import Vapor

/// What a Vapor `CacheExpirationTime` means for a stored value.
enum DriverExpiration: Equatable {
    /// No lifetime was given, or one too long to represent: the value never expires.
    case never
    /// The value lives this many seconds.
    case after(seconds: Int)
    /// Zero or a negative lifetime: the value has expired as it is stored, so the key is removed.
    case alreadyExpired

    /// Lifetimes beyond this many seconds (about 100 years) never expire: no deadline that far
    /// away matters, and none overflows a clock.
    static let longestLifetime = 100 * 365 * 86_400

    /// `time` without trapping where `CacheExpirationTime.seconds` would overflow.
    init(_ time: CacheExpirationTime?) {
        guard let time else {
            self = .never
            return
        }
        let (count, unit): (Int, Int)
        switch time {
        case .seconds(let seconds): (count, unit) = (seconds, 1)
        case .minutes(let minutes): (count, unit) = (minutes, 60)
        case .hours(let hours): (count, unit) = (hours, 3_600)
        case .days(let days): (count, unit) = (days, 86_400)
        }
        if count <= 0 {
            self = .alreadyExpired
            return
        }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: unit)
        self = overflow || seconds > Self.longestLifetime ? .never : .after(seconds: seconds)
    }

    /// The cache's expiration; nil for `.alreadyExpired`, which stores nothing.
    var expiration: Expiration? {
        switch self {
        case .never: return .never
        case .after(let seconds): return .after(.seconds(seconds))
        case .alreadyExpired: return nil
        }
    }
}
#endif
