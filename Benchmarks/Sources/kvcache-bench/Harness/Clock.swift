#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic time in nanoseconds, read only around whole batches of operations.
enum Clock {
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Runs `body` once and returns the elapsed nanoseconds.
    @inline(__always)
    static func measure(_ body: () throws -> Void) rethrows -> UInt64 {
        let start = now()
        try body()
        return now() - start
    }
}

extension Clock {
    /// The median time between two back-to-back clock reads: what a timed
    /// single operation carries on top of the operation itself.
    static let overhead: UInt64 = {
        var deltas = (0..<1_001).map { _ -> UInt64 in
            let first = now()
            return now() - first
        }
        deltas.sort()
        return deltas[deltas.count / 2]
    }()
}
