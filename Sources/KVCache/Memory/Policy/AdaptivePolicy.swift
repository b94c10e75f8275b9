/// The adaptive policy's state and sizes: the frequency sketch that admits entries
/// to the main space, the window's target size and what moves it: under a count limit
/// two shadows of the policy on a sample of the keys (`WindowGradient`), under a cost
/// limit alone the climber (`WindowClimber`), since entries of unequal cost make a
/// sample of keys a poor model of the cost.
///
/// Sizes are kept per limit, entries and cost. The window gets its share of each
/// limit that is set, the main space the rest, and the protected segment 80 % of the
/// main space. A limit that is off (`Int.max`) constrains nothing.
@usableFromInline
struct AdaptivePolicy<Key: Hashable> {
    /// Limits and sizes in both dimensions, as `Double` so that an absent limit is `.infinity`.
    @usableFromInline typealias Size = WindowClimber.Step

    /// The window's first share of each limit.
    static var initialWindowShare: Double { 0.01 }
    /// The protected segment's share of the main space.
    @inlinable static var protectedShare: Double { 0.8 }
    /// The largest sketch, in entries (8 bytes each); more entries share counters.
    @usableFromInline static var largestSketch: Int { 1 << 24 }
    /// The sketch allocated up front for a count limit (more is added as entries come).
    static var initialSketch: Int { 4096 }

    @usableFromInline let hash: PolicyHash<Key>
    @usableFromInline var sketch: FrequencySketch
    /// Moves the window without a count limit.
    @usableFromInline var climber: WindowClimber
    /// Moves the window under a count limit (nil without one). A class, so that the
    /// policy's state that every use touches stays in a few cache lines.
    var gradient: WindowGradient?
    /// The gradient's sample threshold, kept here for the check every request makes
    /// (0 without a gradient).
    @usableFromInline private(set) var sampleThreshold: UInt64 = 0
    /// Chooses the admission lead.
    @usableFromInline var duels = AdmissionDuels(capacity: 0)
    /// The limits: entries and cost, `.infinity` where off.
    @usableFromInline var capacity: Size
    /// The window's target size: a fractional entry count, so that small steps add up.
    @usableFromInline var window: Size
    /// Whether some limit is set. Without one nothing is evicted, and uses are not counted.
    @usableFromInline var isBounded = false
    /// The protected segment's largest size, kept with the window's: every promotion
    /// compares with it, and it changes only when the window or the limits do.
    @usableFromInline private(set) var protectedMaximum = Size(count: 0, cost: 0)
    /// The climber's sample under a count limit of one entry (without a count limit it
    /// follows the entries; with a larger one the shadows move the window instead).
    @usableFromInline private(set) var countSampleSize: Int?

    init(seed: UInt64, countLimit: Int, costLimit: Int64) {
        hash = PolicyHash(seed: seed)
        capacity = Size(count: 0, cost: 0)
        window = capacity
        sketch = FrequencySketch(capacity: 0)
        climber = WindowClimber(capacity: capacity)
        setLimits(count: countLimit, cost: costLimit)
    }

    /// Starts over with new limits: the window at its first share, a new climber,
    /// and a sketch sized for the count limit (kept if it is large enough).
    mutating func setLimits(count: Int, cost: Int64) {
        capacity = Size(
            count: count == .max ? .infinity : Double(count),
            cost: cost == .max ? .infinity : Double(cost))
        isBounded = capacity.count.isFinite || capacity.cost.isFinite
        countSampleSize = count == .max ? nil : Self.sampleSize(forCapacity: count)
        window = Size(
            count: capacity.count.isFinite ? max(1, capacity.count * Self.initialWindowShare) : .infinity,
            cost: capacity.cost * Self.initialWindowShare)
        clampWindow()
        duels = AdmissionDuels(capacity: count == .max ? 0 : count)
        gradient = count == .max || count < 2 ? nil : WindowGradient(countLimit: count, share: Self.initialWindowShare)
        sampleThreshold = gradient?.threshold ?? 0
        climber = WindowClimber(capacity: Size(
            count: capacity.count.isFinite ? capacity.count : 0,
            cost: capacity.cost.isFinite ? capacity.cost : 0))
        // The sketch is allocated once some limit is set: without one nothing is counted.
        let sketchCapacity = count == .max ? 16 : min(count, Self.initialSketch)
        if isBounded, sketch.capacity < sketchCapacity {
            sketch = FrequencySketch(capacity: sketchCapacity, epoch: sketch.epoch &+ 1)
        }
    }

    /// Grows the sketch once the entries outnumber it (counts start over).
    @inlinable
    mutating func ensureSketchCapacity(forEntries entries: Int) {
        guard entries > sketch.capacity else { return }
        growSketch(forEntries: entries)
    }

    @usableFromInline
    mutating func growSketch(forEntries entries: Int) {
        guard sketch.capacity < Self.largestSketch else { return }
        let limit = capacity.count.isFinite ? Int(capacity.count) : Self.largestSketch
        let grown = min(max(sketch.capacity * 2, entries), limit, Self.largestSketch)
        if grown > sketch.capacity { sketch = FrequencySketch(capacity: grown, epoch: sketch.epoch &+ 1) }
    }

    /// The sketch's estimate of `key`'s recent uses.
    @inlinable
    func frequency(of key: Key) -> UInt8 {
        sketch.frequency(hash.hash(key))
    }

    // MARK: - Sizes

    /// The window's entries and cost when full (whole entries).
    @inlinable
    var windowMaximum: Size {
        Size(count: window.count.rounded(.down), cost: window.cost)
    }

    /// The main space's entries and cost when full.
    @inlinable
    var mainMaximum: Size {
        let window = windowMaximum
        return Size(
            count: capacity.count.isFinite ? capacity.count - window.count : .infinity,
            cost: capacity.cost.isFinite ? capacity.cost - window.cost : .infinity)
    }

    /// Whether the window holds more than its share.
    @inlinable
    func windowIsOver(_ size: SegmentSize) -> Bool {
        Self.size(size, exceeds: windowMaximum)
    }

    /// Whether a segment of `size` holds more than `maximum` (the window's or
    /// `protectedMaximum`) in entries or in cost.
    @inlinable
    static func size(_ size: SegmentSize, exceeds maximum: Size) -> Bool {
        Double(size.count) > maximum.count || size.cost.asDouble > maximum.cost
    }

    /// Whether a candidate from the window fits in the main space without an eviction;
    /// returns the limit it lacks room in otherwise. Entries: the main space holds
    /// `main` and gets its share. Cost: the cache's `total`, which counts the
    /// candidate already, must fit the limit (the main space may use cost that the
    /// window leaves unused, so a window emptied by one costly entry takes no room).
    @inlinable
    func mainLacksRoom(_ main: SegmentSize, total: CostTotal) -> EvictionReason? {
        if Double(main.count) >= mainMaximum.count { return .count }
        if total.asDouble > capacity.cost { return .cost }
        return nil
    }

    // MARK: - Adapting

    /// Records a request of the key of policy hash `hash`, a hit or not: for the shadows if
    /// they sample the key, else for the climber. Either may move the window.
    @inlinable
    mutating func record(hit: Bool, hash: UInt32, entries: Int) {
        if sampleThreshold != 0 {
            if WindowGradient.samples(hash, threshold: sampleThreshold) { recordSampled(hash) }
            return
        }
        let sampleSize = countSampleSize ?? Self.sampleSize(forCapacity: max(entries, 64))
        guard let step = climber.record(hit: hit, sampleSize: sampleSize) else { return }
        move(by: step)
    }

    /// Feeds a sampled request to the shadows, and takes the share they choose at the end of a period.
    @usableFromInline
    mutating func recordSampled(_ hash: UInt32) {
        guard let share = gradient?.record(hash, lead: duels.lead, sketch: sketch) else { return }
        setWindowShare(share)
    }

    /// Sets the window to `share` of each limit.
    mutating func setWindowShare(_ share: Double) {
        window = Size(
            count: capacity.count.isFinite ? capacity.count * share : .infinity,
            cost: capacity.cost * share)
        clampWindow()
    }

    /// The climber's sample for a cache of `capacity` entries.
    @inlinable
    static func sampleSize(forCapacity capacity: Int) -> Int {
        let (size, overflow) = capacity.multipliedReportingOverflow(by: WindowClimber.samplePeriod)
        return overflow ? .max : size
    }

    /// Moves the window by a climber's step.
    @usableFromInline
    mutating func move(by step: Size) {
        window.count += step.count
        window.cost += step.cost
        clampWindow()
    }

    /// Keeps the window at one entry or more and leaves the main space one entry or more.
    /// Then sets the protected segment's share of the main space.
    private mutating func clampWindow() {
        if capacity.count.isFinite { window.count = min(capacity.count - 1, max(1, window.count)) }
        if capacity.cost.isFinite { window.cost = min(capacity.cost, max(0, window.cost)) }
        let main = mainMaximum
        protectedMaximum = Size(
            count: main.count.isFinite ? (main.count * Self.protectedShare).rounded(.down) : .infinity,
            cost: main.cost * Self.protectedShare)
    }
}
