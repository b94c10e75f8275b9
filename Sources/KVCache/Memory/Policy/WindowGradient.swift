import Foundation

/// Moves the window's share under a count limit: two shadows of the policy
/// (`WindowShadow`), one with a smaller window than the cache's and one with a larger,
/// replay the same sample of the keys (spatial sampling, as SHARDS). After each period the
/// logarithm of the share moves toward the shadow that hit more, by an amount that grows
/// with the difference, and both shadows follow around the new share.
///
/// Why shadows and not Caffeine's climber, which compares the cache's own hit rate from one
/// sample to the next: a trace's own phases change the hit rate far more than the window
/// does, so the climber follows them, and with several threads it follows the order reads
/// happened to be replayed in. The two shadows see every sampled request at the same moment,
/// so phases cancel (docs/memory-policy-research.md, "The same probe on two shadows").
/// The logarithm lets the share go from 1 % to LRU's size in a few periods (sprite, zigzag)
/// and down to a few entries (loops).
@usableFromInline
final class WindowGradient {
    /// Sampled keys a shadow holds at most: the sample rate is this over the count limit.
    static var sampledEntries: Int { 1_024 }
    /// The shadows' shares are the cache's × e^-spread and × e^spread.
    static var spread: Double { 1.0 }
    /// The most the log share moves in one period.
    static var gain: Double { 0.5 }
    /// The shadows' difference in hits, as a share of a period's requests, that moves the
    /// log share by the whole gain (a smaller one moves it in proportion).
    static var scale: Double { 0.04 }
    /// The bounds of the share. Not lower: where both shadows' windows are a couple of
    /// entries, neither sees what a larger one would gain, and a phase that drove the share
    /// there would keep it there after recency starts to pay (sprite at 707 entries, in
    /// some orders of its requests: 3 points).
    static var smallestShare: Double { 0.005 }
    static var largestShare: Double { 0.999 }

    /// Keys whose mixed policy hash is below this are sampled (2^32: all).
    let threshold: UInt64
    /// The shadow below the cache's share and the one above.
    let smaller: WindowShadow
    let larger: WindowShadow
    /// Sampled requests per period: the shadows' capacity.
    let period: Int
    private var requestsInPeriod = 0
    /// Every sampled request recorded.
    private(set) var sampledRequests = 0
    /// The natural logarithm of the window's share of the count limit.
    private(set) var logShare: Double

    /// Shadows for a cache of `countLimit` entries (2 or more) whose window starts at `share`.
    init(countLimit: Int, share: Double) {
        let rate = min(1, Double(Self.sampledEntries) / Double(max(1, countLimit)))
        threshold = UInt64((rate * 0x1_0000_0000).rounded(.up))
        // The shadows model the keys' sample: the count limit at the rate sampled (for
        // limits beyond 2^42, the rate's resolution, a smaller cache than that).
        let sampled = min(Self.sampledEntries, max(2, Int((Double(countLimit) * Double(threshold) / 0x1_0000_0000).rounded())))
        period = sampled
        logShare = log(share)
        smaller = WindowShadow(capacity: sampled, window: 1)
        larger = WindowShadow(capacity: sampled, window: 1)
        placeShadows()
    }

    /// The window's share of the count limit.
    var share: Double { exp(logShare) }

    /// Whether requests of a key of policy hash `hash` are in the sample.
    func samples(_ hash: UInt32) -> Bool {
        Self.samples(hash, threshold: threshold)
    }

    /// Whether a key of policy hash `hash` is in a sample of threshold `threshold`.
    @inlinable
    static func samples(_ hash: UInt32, threshold: UInt64) -> Bool {
        // Mixed, so that the sample does not follow the bits that place a key in the sketch.
        UInt64(hash &* 0x9E37_79B1) < threshold
    }

    /// Records a sampled request; at the end of a period, returns the window's new share.
    func record(_ hash: UInt32, lead: UInt8, sketch: FrequencySketch) -> Double? {
        smaller.record(hash, lead: lead) { sketch.frequency($0) }
        larger.record(hash, lead: lead) { sketch.frequency($0) }
        sampledRequests &+= 1
        requestsInPeriod += 1
        guard requestsInPeriod >= period else { return nil }
        let difference = Double(larger.takeHits() - smaller.takeHits())
        let step = max(-1, min(1, difference / (Self.scale * Double(requestsInPeriod))))
        requestsInPeriod = 0
        logShare = min(log(Self.largestShare), max(log(Self.smallestShare), logShare + Self.gain * step))
        placeShadows()
        return share
    }

    /// Sets the shadows' windows around the share, at least one entry apart.
    private func placeShadows() {
        let capacity = Double(smaller.capacity)
        let below = max(1, capacity * exp(logShare - Self.spread))
        let above = max(below + 1, capacity * exp(logShare + Self.spread))
        smaller.setWindow(min(capacity - 2, below))
        larger.setWindow(min(capacity - 1, above))
    }

    /// What breaks the shadows' invariants.
    func invariantViolations() -> [String] {
        var violations = smaller.invariantViolations() + larger.invariantViolations()
        if smaller.window >= larger.window, smaller.capacity > 2 {
            violations.append("shadow windows \(smaller.window) and \(larger.window) out of order")
        }
        return violations
    }
}
