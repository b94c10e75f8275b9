/// The limits of a memory cache and the figures derived from them.
@usableFromInline
struct MemoryCacheLimits: Sendable {
    @usableFromInline private(set) var count: Int
    @usableFromInline private(set) var cost: Int64
    @usableFromInline var age: Double
    let lowWatermark: Double
    /// Where a purge stops once `count` is exceeded.
    @usableFromInline private(set) var countTarget: Int
    /// Where a purge stops once `cost` is exceeded.
    @usableFromInline private(set) var costTarget: Int64
    /// Evicted values wait in a batch until there are this many...
    @usableFromInline private(set) var releaseBatchCount: Int
    /// ...or their cost reaches this, so the batch never holds much of the cache's memory.
    @usableFromInline private(set) var releaseBatchCost: Int64
    /// Whether reads record the time. It turns on with the first finite age
    /// limit (or `trim(toAge:)`) and stays on.
    @usableFromInline var tracksAge: Bool

    /// Takes validated settings (see `MemoryCache.Configuration.validate()`).
    init(count: Int, cost: Int64, age: Double, lowWatermark: Double) {
        self.count = count
        self.cost = cost
        self.age = age
        self.lowWatermark = lowWatermark
        countTarget = 0
        costTarget = 0
        releaseBatchCount = 1
        releaseBatchCost = 0
        tracksAge = self.age != .infinity
        update()
    }

    mutating func setCount(_ newValue: Int) {
        count = newValue
        update()
    }

    mutating func setCost(_ newValue: Int64) {
        cost = newValue
        update()
    }

    private mutating func update() {
        // Scaling by a fraction below 1 cannot overflow when converting back.
        countTarget = lowWatermark >= 1 ? count : Int((Double(count) * lowWatermark).rounded(.down))
        costTarget = lowWatermark >= 1 ? cost : Int64((Double(cost) * lowWatermark).rounded(.down))
        releaseBatchCount = min(64, max(1, count / 16))
        releaseBatchCost = cost == .max ? .max : max(1, cost / 16)
    }
}
