/// Durations in seconds, as configurations give them, turned into what timers
/// and system calls take without trapping on infinite or huge values.
enum Seconds {
    /// Delays of this many seconds (about 31 years) or more, and infinity, mean
    /// "never": no timer is armed for them.
    static let never: Double = 1e9

    /// True if a delay of `seconds` never comes (also for NaN, which validation rejects).
    static func isNever(_ seconds: Double) -> Bool { !(seconds < never) }

    /// `seconds` as whole milliseconds in `0...Int32.max` (Int32.max ms is about
    /// 24.8 days: "wait forever" for a busy handler).
    static func clampedMilliseconds(_ seconds: Double) -> Int32 {
        guard seconds > 0 else { return 0 }
        let milliseconds = (seconds * 1000).rounded(.up)
        return milliseconds < Double(Int32.max) ? Int32(milliseconds) : .max
    }
}
