import ArgumentParser

/// A duration on the command line: a number of seconds, or a number with a unit
/// (`ms`, `s`, `m`, `h`, `d`): `90`, `1.5s`, `500ms`, `10m`, `2h`, `7d`.
struct DurationArgument: ExpressibleByArgument, CustomStringConvertible {
    var duration: Duration
    /// As given, for messages.
    var description: String

    /// The longest duration taken: 100 years, far beyond any cache lifetime, and well
    /// inside what `Duration` holds.
    static let longest: Double = 100 * 365 * 86_400

    init?(argument: String) {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3_600), ("d", 86_400)]
        var number = Substring(argument)
        var scale = 1.0
        // "ms" before "s": the longest suffix that matches.
        for (suffix, factor) in units where argument.hasSuffix(suffix) {
            number = argument.dropLast(suffix.count)
            scale = factor
            break
        }
        guard let value = Double(number), value.isFinite, value >= 0, value * scale <= Self.longest else { return nil }
        duration = .seconds(value * scale)
        description = argument
    }

    static var defaultCompletionKind: CompletionKind { .default }
}

extension Duration {
    /// Whole seconds, rounded up (a duration of 0.2 s has not passed in 0 s).
    var wholeSecondsRoundedUp: Int64 {
        let parts = components
        return parts.attoseconds > 0 && parts.seconds < .max ? parts.seconds + 1 : parts.seconds
    }

    /// Seconds as a number, for JSON output.
    var secondsValue: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
