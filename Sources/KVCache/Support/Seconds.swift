/// Durations in seconds, as the levels keep them internally, turned into what
/// timers and system calls take without trapping on huge values.
enum Seconds {
    /// Delays of this many seconds (about 31 years) or more mean "never": no
    /// timer is armed for them.
    static let never: Double = 1e9

    /// True if a delay of `seconds` never comes.
    static func isNever(_ seconds: Double) -> Bool { !(seconds < never) }

    /// `seconds` as whole milliseconds in `0...Int32.max` (Int32.max ms is about
    /// 24.8 days: "wait forever" for a busy handler).
    static func clampedMilliseconds(_ seconds: Double) -> Int32 {
        guard seconds > 0 else { return 0 }
        let milliseconds = (seconds * 1000).rounded(.up)
        return milliseconds < Double(Int32.max) ? Int32(milliseconds) : .max
    }
}

extension Duration {
    /// The duration in seconds, as the levels keep time internally (every
    /// `Duration` is finite, so this is too).
    package var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }

    /// `seconds` as a duration, without trapping where `Duration.seconds(_:)` would:
    /// NaN is zero and values beyond `Duration`'s range are its largest or smallest
    /// (values read from a store may be anything).
    static func clamping(seconds: Double) -> Duration {
        if seconds.isNaN { return .zero }
        // 2^63 seconds: Int64's range, inside Duration's.
        let bound = 9.2e18
        if seconds >= bound { return .seconds(Int64.max) }
        if seconds <= -bound { return .seconds(Int64.min) }
        return .seconds(seconds)
    }
}
