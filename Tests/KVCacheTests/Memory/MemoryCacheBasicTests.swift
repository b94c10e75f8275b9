import Testing
@testable import KVCache

@Suite struct MemoryCacheBasicTests {
    @Test func storesAndReturnsValues() throws {
        let cache: MemoryCache<String, Int> = try makeCache()
        cache.setValue(1, forKey: "a")
        cache["b"] = 2
        #expect(cache.value(forKey: "a") == 1)
        #expect(cache["b"] == 2)
        #expect(cache["missing"] == nil)
        #expect(cache.count == 2)
    }

    @Test func settingAnExistingKeyReplacesTheValueAndCost() throws {
        let cache: MemoryCache<String, Int> = try makeCache()
        cache.setValue(1, forKey: "a", cost: 10)
        cache.setValue(2, forKey: "a", cost: 3)
        #expect(cache["a"] == 2)
        #expect(cache.count == 1)
        #expect(cache.totalCost == 3)
    }

    /// A promotion's store skips the in-place look-up; a key stored meanwhile is still
    /// replaced, not duplicated, for the default policy and for LRU.
    @Test(arguments: [EvictionPolicy.adaptive, .lru])
    func aStoreThatSkipsTheInPlaceLookUpReplacesAStoredKey(policy: EvictionPolicy) throws {
        let cache: MemoryCache<String, Int> = try makeCache(.init(autoTrimInterval: nil, policy: policy))
        cache.setValue(1, forKey: "a", cost: 3)
        cache.store(2, forKey: "a", cost: 3, expiration: .never, mayBeStored: false)
        cache.store(3, forKey: "b", cost: 4, expiration: .never, mayBeStored: false)
        #expect(cache["a"] == 2)
        #expect(cache["b"] == 3)
        #expect(cache.count == 2)
        #expect(cache.totalCost == 7)
    }

    @Test func removeValueReturnsTheOldValue() throws {
        let cache: MemoryCache<String, Int> = try makeCache()
        cache.setValue(1, forKey: "a", cost: 5)
        #expect(cache.removeValue(forKey: "a") == 1)
        #expect(cache.removeValue(forKey: "a") == nil)
        #expect(cache["a"] == nil)
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
    }

    @Test func assigningNilThroughTheSubscriptRemoves() throws {
        let cache: MemoryCache<String, Int> = try makeCache()
        cache["a"] = 1
        cache["a"] = nil
        #expect(!cache.contains("a"))
        #expect(cache.count == 0)
    }

    @Test func containsReportsLiveEntriesWithoutCountingARead() throws {
        let cache: MemoryCache<String, Int> = try makeCache()
        cache["a"] = 1
        #expect(cache.contains("a"))
        #expect(!cache.contains("b"))
        #expect(cache.statistics.hits == 0)
        #expect(cache.statistics.misses == 0)
    }

    @Test func totalCostSumsEntryCostsAndIgnoresNegativeOnes() throws {
        let cache: MemoryCache<Int, Int> = try makeCache()
        cache.setValue(0, forKey: 0, cost: 7)
        cache.setValue(1, forKey: 1, cost: 8)
        cache.setValue(2, forKey: 2, cost: -5)
        #expect(cache.totalCost == 15)
        cache.removeValue(forKey: 0)
        #expect(cache.totalCost == 8)
    }

    @Test func statisticsCountHitsMissesInsertionsAndEvictions() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 2, autoTrimInterval: nil))
        cache[1] = 1
        cache[2] = 2
        cache[2] = 20
        cache[3] = 3  // evicts 1
        _ = cache[2]
        _ = cache[1]
        cache.removeValue(forKey: 3)
        let statistics = cache.statistics
        #expect(statistics.hits == 1)
        #expect(statistics.misses == 1)
        #expect(statistics.sets == 4)
        #expect(statistics.evictions[.count] == 1)
        #expect(statistics.evictions[.replaced] == 1)
        #expect(statistics.evictions[.removed] == 1)
        #expect(statistics.evictions[.cost] == 0)
        #expect(statistics.totalEvictions == 3)
        #expect(statistics.count == 1)
        #expect(statistics.hitRatio == 0.5)
    }

    @Test func removeAllEmptiesTheCacheAndItCanBeUsedAgain() throws {
        let cache: MemoryCache<Int, Int> = try makeCache()
        for key in 0..<100 { cache.setValue(key, forKey: key, cost: 2) }
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
        #expect(cache[5] == nil)
        #expect(cache.statistics.evictions[.removed] == 100)
        cache[5] = 50
        #expect(cache[5] == 50)
        #expect(cache.keysByRecency == [5])
    }

    @Test func slotsAreReusedAcrossManySetAndRemoveCycles() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 64, autoTrimInterval: nil))
        // A full cache inserts before it evicts, so it uses one slot more than its limit.
        for key in 0..<65 { cache[key] = key }
        let slots = cache.slotCount
        for key in 65..<20_065 {
            cache[key] = key       // evicts the oldest
            if key % 3 == 0 { cache[key] = nil }
        }
        #expect(cache.slotCount == slots)
        #expect(slots <= 65)
    }
}
