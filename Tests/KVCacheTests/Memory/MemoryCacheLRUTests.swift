import KVCacheTestSupport
import Testing
@testable import KVCache

@Suite struct MemoryCacheLRUTests {
    @Test func entriesAreOrderedFromMostToLeastRecentlyUsed() throws {
        let cache: MemoryCache<Int, Int> = try makeCache()
        for key in 1...4 { cache[key] = key }
        #expect(cache.keysByRecency == [4, 3, 2, 1])
        _ = cache[2]
        #expect(cache.keysByRecency == [2, 4, 3, 1])
        cache[3] = 30
        #expect(cache.keysByRecency == [3, 2, 4, 1])
        cache[4] = nil
        #expect(cache.keysByRecency == [3, 2, 1])
        _ = cache[1]
        #expect(cache.keysByRecency == [1, 3, 2])
    }

    @Test func containsAndMissesDoNotChangeTheOrder() throws {
        let cache: MemoryCache<Int, Int> = try makeCache()
        for key in 1...3 { cache[key] = key }
        _ = cache.contains(1)
        _ = cache[99]
        #expect(cache.keysByRecency == [3, 2, 1])
    }

    @Test func theCountLimitEvictsTheLeastRecentlyUsedEntry() throws {
        let log = EvictionLog<Int, Int>()
        let cache: MemoryCache<Int, Int> = try makeCache(
            .init(countLimit: 3, autoTrimInterval: nil, policy: .lru, onEviction: log.callback))
        for key in 1...3 { cache[key] = key }
        _ = cache[1]
        cache[4] = 4
        #expect(cache[2] == nil)
        #expect(cache.keysByRecency == [4, 1, 3])
        #expect(log.keys == [2])
        #expect(log.reasons == [.count])
    }

    @Test func aCountLimitOfZeroKeepsNothing() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 0, autoTrimInterval: nil, policy: .lru))
        cache[1] = 1
        #expect(cache[1] == nil)
        #expect(cache.count == 0)
    }

    @Test func listStaysConsistentThroughRandomOperations() throws {
        // Checks the slab list against a simple array model of LRU.
        let cache: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 20, autoTrimInterval: nil, policy: .lru))
        var model: [Int] = []  // most recent first
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<5_000 {
            let key = Int(generator.next() % 40)
            switch generator.next() % 3 {
            case 0:
                let hit = cache[key] != nil
                #expect(hit == model.contains(key))
                if let index = model.firstIndex(of: key) { model.remove(at: index); model.insert(key, at: 0) }
            case 1:
                cache[key] = key
                model.removeAll { $0 == key }
                model.insert(key, at: 0)
                if model.count > 20 { model.removeLast() }
            default:
                cache[key] = nil
                model.removeAll { $0 == key }
            }
        }
        #expect(cache.keysByRecency == model)
    }
}
