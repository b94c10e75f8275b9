@testable import KVCache

/// The library's manual clock serves memory and disk tests alike, so one
/// clock can drive both levels of a `Cache`.
extension ManualClock {
    /// Wall-clock seconds since 1970.
    var now: Double { wall }

    /// The clock as `DiskCache.Configuration.clock` takes it.
    var function: @Sendable () -> Double { { self.wall } }
}
