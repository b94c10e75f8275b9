#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a memory cache reads the time.
///
/// Precise kernel clocks cost about 50 ns a read on some virtual machines and
/// coarse ones about 12 ns, so the cache reads time only when an age limit or
/// an entry's expiration makes it necessary, and reads the coarse clocks.
/// A coarse clock lags true time by up to its resolution, so deadlines are
/// computed from a lower bound of the time and checked against an upper bound:
/// an entry may expire a few milliseconds early, never late.
///
/// Tests inject a ``ManualClock`` so age and expiration tests need no sleeps.
@usableFromInline
struct CacheClock: Sendable {
    let manual: ManualClock?

    static let system = CacheClock(manual: nil)

    /// Seconds on a monotonic clock (for ages), at most the true time.
    @usableFromInline
    func monotonicNow() -> Double {
        if let manual { return manual.monotonic }
        return Self.read(Self.coarseMonotonic)
    }

    /// Wall-clock seconds since 1970, at most the true time (to compute deadlines).
    func wallLowerBound() -> Double {
        if let manual { return manual.wall }
        return Self.read(Self.coarseWall)
    }

    /// Wall-clock seconds since 1970, at least the true time (to check deadlines).
    func wallUpperBound() -> Double {
        if let manual { return manual.wall }
        return Self.read(Self.coarseWall) + Self.coarseResolution
    }

    /// The clock resolution, by which an age check errs toward "too old".
    func monotonicSlack() -> Double {
        manual == nil ? Self.coarseResolution : 0
    }

    #if os(Linux)
    private static let coarseMonotonic = CLOCK_MONOTONIC_COARSE
    private static let coarseWall = CLOCK_REALTIME_COARSE
    #else
    private static let coarseMonotonic = CLOCK_MONOTONIC
    private static let coarseWall = CLOCK_REALTIME
    #endif

    private static let coarseResolution: Double = {
        var resolution = timespec()
        guard clock_getres(coarseWall, &resolution) == 0 else { return 0.01 }
        return Double(resolution.tv_sec) + Double(resolution.tv_nsec) * 1e-9
    }()

    private static func read(_ clock: clockid_t) -> Double {
        var now = timespec()
        clock_gettime(clock, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
    }
}

/// A clock that moves only when told to; for tests of ages and expirations.
final class ManualClock: @unchecked Sendable {
    private let mutex = PThreadMutex()
    private var wallSeconds: Double
    private var monotonicSeconds: Double

    init(wall: Double = 1_000_000_000, monotonic: Double = 1_000) {
        wallSeconds = wall
        monotonicSeconds = monotonic
    }

    var wall: Double {
        mutex.lock(); defer { mutex.unlock() }
        return wallSeconds
    }

    var monotonic: Double {
        mutex.lock(); defer { mutex.unlock() }
        return monotonicSeconds
    }

    /// Moves both clocks forward.
    func advance(by seconds: Double) {
        mutex.lock(); defer { mutex.unlock() }
        wallSeconds += seconds
        monotonicSeconds += seconds
    }
}
