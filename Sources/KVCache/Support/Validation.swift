/// The one rule for settings and arguments out of range, on every level: they are
/// rejected with `KVCacheError.invalidArgument`, never silently clamped.
enum Validation {
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw KVCacheError.invalidArgument(message()) }
    }

    /// Rejects a fraction outside 0...1 (and NaN).
    static func checkFraction(_ fraction: Double, _ name: String) throws {
        try check((0...1).contains(fraction), "\(name) must be in 0...1, not \(fraction)")
    }
}
