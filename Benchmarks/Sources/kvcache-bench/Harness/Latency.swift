import Histogram

/// Percentiles of single-operation latencies, pooled over all runs of one
/// strategy. Batches are timed as a whole for the medians; these come from
/// clock reads around individual operations (every one on disk, a sample in
/// memory) and show the tail that a median per batch hides.
///
/// An HDR histogram (hdrhistogram-swift) with three significant digits: a
/// percentile is within 0.1 % of the latency actually observed at that rank
/// (nearest rank), far below the run-to-run noise; the maximum is exact.
struct Latency: Codable, Sendable {
    /// Nanoseconds.
    var p50: Double
    var p99: Double
    var p999: Double
    var max: Double
    /// Operations timed, over all runs; p999 needs thousands to mean much.
    var samples: Int

    init?(_ nanoseconds: [UInt64]) {
        guard !nanoseconds.isEmpty else { return nil }
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        for value in nanoseconds { histogram.record(value) }
        self.init(histogram)
    }

    init?(_ histogram: Histogram<UInt64>) {
        guard histogram.totalCount > 0 else { return nil }
        p50 = Double(histogram.valueAtPercentile(50))
        p99 = Double(histogram.valueAtPercentile(99))
        p999 = Double(histogram.valueAtPercentile(99.9))
        max = Double(histogram.maxRecorded)
        samples = Int(histogram.totalCount)
    }
}

/// Times one operation after another with a single clock read per operation:
/// each latency runs from the end of the previous operation, so the batch
/// time is exactly the sum. Meant for operations of a microsecond or more.
struct LapTimer {
    private(set) var latencies: [UInt64] = []
    private let start: UInt64
    private var previous: UInt64

    init(capacity: Int) {
        latencies.reserveCapacity(capacity)
        start = Clock.now()
        previous = start
    }

    @inline(__always)
    mutating func lap() {
        let now = Clock.now()
        latencies.append(now - previous)
        previous = now
    }

    /// Nanoseconds from the start to now (including anything after the last lap).
    func elapsed() -> UInt64 { Clock.now() - start }
}

/// Times every `interval`-th operation of a nanosecond-scale loop, with the
/// clock's own cost subtracted, so the batch time barely changes.
struct LatencySampler {
    static let interval = 32
    private(set) var latencies: [UInt64] = []
    private var countdown = 0

    init(expectedOperations: Int) {
        latencies.reserveCapacity(expectedOperations / Self.interval + 1)
    }

    /// Runs `body`, timing it if it is the sampled one.
    @inline(__always)
    mutating func measure<R>(_ body: () -> R) -> R {
        guard countdown == 0 else {
            countdown -= 1
            return body()
        }
        countdown = Self.interval - 1
        let begin = Clock.now()
        let result = body()
        let end = Clock.now()
        let elapsed = end - begin
        latencies.append(elapsed > Clock.overhead ? elapsed - Clock.overhead : 0)
        return result
    }
}
