import Testing
@testable import KVCache

@Suite struct MemoryCacheLimitTests {
    @Test func theCostLimitEvictsLeastRecentlyUsedEntriesUntilTheCostFits() throws {
        let log = EvictionLog<Int, Int>()
        let cache: MemoryCache<Int, Int> = try makeCache(
            .init(costLimit: 100, autoTrimInterval: nil, policy: .lru, onEviction: log.callback))
        for key in 1...4 { cache.setValue(key, forKey: key, cost: 25) }
        _ = cache[1]
        cache.setValue(5, forKey: 5, cost: 40)  // 140: evicts 2 and 3
        #expect(cache.keysByRecency == [5, 1, 4])
        #expect(cache.totalCost == 90)
        #expect(log.keys == [2, 3])
        #expect(log.reasons == [.cost, .cost])
    }

    @Test func anEntryCostlierThanTheLimitIsNotKept() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(.init(costLimit: 10, autoTrimInterval: nil, policy: .lru))
        cache.setValue(1, forKey: 1, cost: 5)
        cache.setValue(2, forKey: 2, cost: 11)
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
        // The adaptive policy admits the costly entry only over a less used one, and
        // neither is: it keeps entry 1.
        let adaptive: MemoryCache<Int, Int> = try makeCache(.init(costLimit: 10, autoTrimInterval: nil))
        adaptive.setValue(1, forKey: 1, cost: 5)
        adaptive.setValue(2, forKey: 2, cost: 11)
        #expect(adaptive[2] == nil)
        #expect(adaptive.totalCost == 5)
    }

    /// A slab that doubled past the count limit would hold up to twice the slots the
    /// cache can use.
    @Test(arguments: [EvictionPolicy.adaptive, .lru])
    func theSlabGrowsToTheCountLimitAndOneMore(policy: EvictionPolicy) throws {
        let cache: MemoryCache<Int, Int> = try makeCache(
            .init(countLimit: 1_000, lowWatermark: 1, autoTrimInterval: nil, policy: policy))
        for key in 0..<5_000 { cache[key] = key }
        #expect(cache.count == 1_000)
        #expect(cache.slotCapacity == 1_001)
        try cache.setCountLimit(3_000)
        for key in 5_000..<10_000 { cache[key] = key }
        #expect(cache.count == 3_000)
        #expect(cache.slotCapacity == 3_001)
        // Without a count limit it doubles.
        let unbounded: MemoryCache<Int, Int> = try makeCache(.init(autoTrimInterval: nil, policy: policy))
        for key in 0..<1_000 { unbounded[key] = key }
        #expect(unbounded.slotCapacity == 1_024)
        // A limit of 0 keeps nothing and needs one slot.
        let none: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 0, autoTrimInterval: nil, policy: policy))
        for key in 0..<100 { none[key] = key }
        #expect(none.count == 0)
        #expect(none.slotCapacity == 1)
    }

    @Test func crossingTheCountLimitPurgesDownToTheLowWatermark() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(
            .init(countLimit: 10, lowWatermark: 0.6, autoTrimInterval: nil, policy: .lru))
        for key in 0..<10 { cache[key] = key }
        #expect(cache.count == 10)
        cache[10] = 10
        #expect(cache.count == 6)
        #expect(cache.keysByRecency == [10, 9, 8, 7, 6, 5])
        for key in 11..<15 { cache[key] = key }
        #expect(cache.count == 10)
        #expect(cache.statistics.evictions[.count] == 5)
    }

    @Test func crossingTheCostLimitPurgesDownToTheLowWatermark() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(
            .init(costLimit: 100, lowWatermark: 0.5, autoTrimInterval: nil))
        for key in 0..<10 { cache.setValue(key, forKey: key, cost: 10) }
        #expect(cache.totalCost == 100)
        cache.setValue(10, forKey: 10, cost: 10)
        #expect(cache.totalCost == 50)
        #expect(cache.count == 5)
    }

    @Test func aPurgeLongerThanOneBurstStillReachesTheWatermark() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(
            .init(countLimit: 2_000, lowWatermark: 0.1, autoTrimInterval: nil, policy: .lru))
        for key in 0...2_000 { cache[key] = key }
        #expect(cache.count == 200)
        #expect(cache[2_000] == 2_000)
        #expect(cache[1_800] == nil)
        #expect(cache.statistics.evictions[.count] == 1_801)
    }

    @Test func loweringTheLimitsTrimsAtOnce() throws {
        let cache: MemoryCache<Int, Int> = try makeCache()
        for key in 0..<10 { cache.setValue(key, forKey: key, cost: 10) }
        try cache.setCountLimit(8)
        #expect(cache.count == 8)
        #expect(cache.countLimit == 8)
        try cache.setCostLimit(50)
        #expect(cache.totalCost == 50)
        #expect(cache.costLimit == 50)
        #expect(cache.keysByRecency == [9, 8, 7, 6, 5])
        #expect(cache.statistics.evictions[.count] == 2)
        #expect(cache.statistics.evictions[.cost] == 3)
    }

    @Test func explicitTrimsEvictLeastRecentlyUsedEntries() throws {
        let log = EvictionLog<Int, Int>()
        let cache: MemoryCache<Int, Int> = try makeCache(.init(autoTrimInterval: nil, onEviction: log.callback))
        for key in 0..<1_000 { cache.setValue(key, forKey: key, cost: 1) }
        try cache.trim(toCount: 600)
        #expect(cache.count == 600)
        try cache.trim(toCost: 100)
        #expect(cache.totalCost == 100)
        #expect(cache.keysByRecency.first == 999)
        #expect(cache.keysByRecency.last == 900)
        #expect(log.reasons.filter { $0 == .count }.count == 400)
        #expect(log.reasons.filter { $0 == .cost }.count == 500)
        try cache.trim(toCount: 0)
        #expect(cache.count == 0)
    }

    @Test func trimmingToAFractionEvictsForMemoryPressure() throws {
        let log = EvictionLog<Int, Int>()
        let cache: MemoryCache<Int, Int> = try makeCache(.init(autoTrimInterval: nil, onEviction: log.callback))
        for key in 0..<100 { cache.setValue(key, forKey: key, cost: key < 50 ? 1 : 3) }  // cost 200
        let trimmable: any MemoryPressureTrimmable = cache
        try trimmable.trim(toFraction: 0.5, reason: .pressure)
        // Half the count (50) leaves cost 150 > 100, so more go.
        #expect(cache.totalCost <= 100)
        #expect(cache.count == 33)
        #expect(Set(log.reasons) == [.pressure])
        try cache.trim(toFraction: 0)
        #expect(cache.count == 0)
    }

    @Test func costsNearInt64MaxDoNotOverflow() throws {
        let cache: MemoryCache<Int, Int> = try makeCache()
        cache.setValue(1, forKey: 1, cost: .max)
        cache.setValue(2, forKey: 2, cost: .max)
        cache.setValue(3, forKey: 3, cost: .max - 1)
        #expect(cache.count == 3)
        #expect(cache.totalCost == .max)
        cache.removeValue(forKey: 1)
        #expect(cache.totalCost == .max)
        cache.removeValue(forKey: 2)
        #expect(cache.totalCost == .max - 1)
        cache.setValue(4, forKey: 4, cost: .max)
        try cache.trim(toFraction: 0.5)
        #expect(cache.count == 1)
        try cache.setCostLimit(.max - 1)
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
    }

    @Test func aCostLimitNearInt64MaxWithAWatermarkDoesNotTrap() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(
            .init(countLimit: .max, costLimit: .max - 1, lowWatermark: 0.5, autoTrimInterval: nil))
        cache.setValue(1, forKey: 1, cost: .max - 1)
        cache.setValue(2, forKey: 2, cost: 1)  // total exceeds the limit: purge to half
        #expect(cache.count == 1)
        #expect(cache[2] == 2)
    }
}
