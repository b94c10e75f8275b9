import Dispatch
import Foundation
import Testing
@testable import KVCache

@Suite struct MemoryCacheExpirationTests {
    @Test func anEntryExpiresAfterItsTimeToLive() throws {
        let clock = ManualClock()
        let log = EvictionLog<String, Int>()
        let cache: MemoryCache<String, Int> = try makeCache(
            .init(autoTrimInterval: nil, onEviction: log.callback), clock: clock)
        cache.setValue(1, forKey: "a", expiration: .after(.seconds(10)))
        cache.setValue(2, forKey: "b")
        clock.advance(by: 9.9)
        #expect(cache["a"] == 1)
        clock.advance(by: 0.1)
        #expect(!cache.contains("a"))
        #expect(cache["a"] == nil)
        #expect(cache["b"] == 2)
        #expect(log.reasons == [.expired])
        #expect(cache.statistics.misses == 1)
        #expect(cache.count == 1)
    }

    @Test func onlyEntriesGivenAnExpirationExpireAmongManyWithout() throws {
        // The times of entries are kept only once one of them can expire:
        // entries stored before and after that one, across slab growth, must not.
        let clock = ManualClock()
        let cache: MemoryCache<Int, Int> = try makeCache(.init(autoTrimInterval: nil), clock: clock)
        for key in 0..<100 { cache[key] = key }
        cache.setValue(-1, forKey: -1, expiration: .after(.seconds(10)))
        for key in 100..<300 { cache[key] = key }
        cache.setValue(-2, forKey: -2, expiration: .after(.seconds(30)))
        clock.advance(by: 20)
        #expect(cache[-1] == nil)
        #expect(cache[-2] == -2)
        #expect((0..<300).allSatisfy { cache[$0] == $0 })
        cache.removeAll()
        cache[1] = 1
        clock.advance(by: 1_000)
        #expect(cache[1] == 1)
    }

    @Test func anEntryExpiresAtItsDate() throws {
        let clock = ManualClock()
        let cache: MemoryCache<String, Int> = try makeCache(.init(autoTrimInterval: nil), clock: clock)
        cache.setValue(1, forKey: "a", expiration: .at(Date(timeIntervalSince1970: clock.wall + 5)))
        cache.setValue(2, forKey: "past", expiration: .at(Date(timeIntervalSince1970: clock.wall - 1)))
        #expect(cache["past"] == nil)
        clock.advance(by: 4)
        #expect(cache["a"] == 1)
        clock.advance(by: 1)
        #expect(cache["a"] == nil)
    }

    @Test func removingAnExpiredEntryReturnsNothing() throws {
        let clock = ManualClock()
        let cache: MemoryCache<String, Int> = try makeCache(.init(autoTrimInterval: nil), clock: clock)
        cache.setValue(1, forKey: "a", expiration: .after(.seconds(1)))
        clock.advance(by: 2)
        #expect(cache.removeValue(forKey: "a") == nil)
        #expect(cache.statistics.evictions[.expired] == 1)
    }

    @Test func readsExtendTheTimeToLiveWhenConfigured() throws {
        let clock = ManualClock()
        let cache: MemoryCache<String, Int> = try makeCache(
            .init(autoTrimInterval: nil, extendsExpirationOnAccess: true), clock: clock)
        cache.setValue(1, forKey: "a", expiration: .after(.seconds(10)))
        cache.setValue(2, forKey: "date", expiration: .at(Date(timeIntervalSince1970: clock.wall + 10)))
        for _ in 0..<3 {
            clock.advance(by: 8)
            #expect(cache["a"] == 1)
        }
        #expect(cache["date"] == nil)  // a date is not extended
        clock.advance(by: 10)
        #expect(cache["a"] == nil)
    }

    @Test func readsDoNotExtendTheTimeToLiveByDefault() throws {
        let clock = ManualClock()
        let cache: MemoryCache<String, Int> = try makeCache(.init(autoTrimInterval: nil), clock: clock)
        cache.setValue(1, forKey: "a", expiration: .after(.seconds(10)))
        clock.advance(by: 8)
        #expect(cache["a"] == 1)
        clock.advance(by: 8)
        #expect(cache["a"] == nil)
    }

    @Test func settingAgainReplacesTheExpiration() throws {
        let clock = ManualClock()
        let cache: MemoryCache<String, Int> = try makeCache(.init(autoTrimInterval: nil), clock: clock)
        cache.setValue(1, forKey: "a", expiration: .after(.seconds(1)))
        cache.setValue(2, forKey: "a")
        clock.advance(by: 100)
        #expect(cache["a"] == 2)
        #expect(cache.withLock { cache.storage.expiringCount } == 0)
    }

    @Test func theAgeLimitExpiresEntriesNotReadInTime() throws {
        let clock = ManualClock()
        let log = EvictionLog<String, Int>()
        let cache: MemoryCache<String, Int> = try makeCache(
            .init(ageLimit: .seconds(10), autoTrimInterval: nil, onEviction: log.callback), clock: clock)
        cache["a"] = 1
        cache["b"] = 2
        clock.advance(by: 6)
        #expect(cache["a"] == 1)  // read: a's age restarts
        clock.advance(by: 6)
        #expect(cache["b"] == nil)
        #expect(cache["a"] == 1)
        #expect(log.reasons == [.expired])
    }

    @Test func trimToAgeRemovesOldEntriesFromTheLeastRecentlyUsedEnd() throws {
        let clock = ManualClock()
        let cache: MemoryCache<Int, Int> = try makeCache(.init(ageLimit: .seconds(1_000), autoTrimInterval: nil), clock: clock)
        for key in 0..<10 {
            cache[key] = key
            clock.advance(by: 1)
        }
        try cache.trim(toAge: .seconds(4.5))  // keys 6...9 were written 4, 3, 2 and 1 seconds ago
        #expect(cache.keysByRecency == [9, 8, 7, 6])
        #expect(cache.statistics.evictions[.expired] == 6)
    }

    @Test func settingAnAgeLimitCountsFromThatMomentAndTrims() throws {
        let clock = ManualClock()
        let cache: MemoryCache<Int, Int> = try makeCache(.init(autoTrimInterval: nil), clock: clock)
        cache[1] = 1
        clock.advance(by: 100)
        try cache.setAgeLimit(.seconds(10))
        #expect(cache.ageLimit == .seconds(10))
        #expect(cache[1] == 1)  // ages were not recorded before: counts as read when the limit was set
        cache[2] = 2
        clock.advance(by: 6)
        _ = cache[2]
        clock.advance(by: 6)
        try cache.setAgeLimit(.seconds(10))  // trims: 1 is 12 s old, 2 only 6 s
        #expect(cache.keysByRecency == [2])
    }

    @Test func theAutoTrimRemovesExpiredEntriesWithoutReads() throws {
        let clock = ManualClock()
        let cache: MemoryCache<Int, Int> = try makeCache(.init(ageLimit: .seconds(50), autoTrimInterval: nil), clock: clock)
        for key in 0..<5_000 {
            cache.setValue(key, forKey: key, expiration: key.isMultiple(of: 2) ? .after(.seconds(10)) : .never)
        }
        cache[-1] = -1
        clock.advance(by: 11)
        cache.autoTrim()
        #expect(cache.count == 2_501)
        #expect(cache.contains(1))
        clock.advance(by: 30)
        _ = cache[-1]
        clock.advance(by: 30)
        cache.autoTrim()
        #expect(cache.keysByRecency == [-1])
    }

    // No time limit: the wait below bounds the test. A limit's clock can start long before
    // the body gets a thread of the pool: in the checking build's parallel run (3 to 5
    // minutes on 2 cores) the body once waited for one longer than the limit of a minute.
    @Test func theAutoTrimTimerRunsInTheBackground() throws {
        let clock = ManualClock()
        let evicted = DispatchSemaphore(value: 0)
        let cache: MemoryCache<Int, Int> = try makeCache(
            .init(autoTrimInterval: .seconds(0.01), onEviction: { _, _, reason in
                if reason == .expired { evicted.signal() }
            }),
            clock: clock)
        cache.setValue(1, forKey: 1, expiration: .after(.seconds(5)))
        clock.advance(by: 6)
        #expect(evicted.wait(timeout: .now() + 30) == .success)
        #expect(cache.count == 0)
    }

    @Test func theAutoTrimTimerDoesNotKeepTheCacheAlive() throws {
        weak var weakCache: MemoryCache<Int, Int>?
        do {
            // A scheduled timer that has not fired: a strong capture in its handler
            // would keep the cache alive. (A timer firing at this moment holds the
            // cache for the length of one trim, which is fine but would race the check.)
            let cache = try MemoryCache<Int, Int>(configuration: .init(autoTrimInterval: .seconds(60)))
            cache[1] = 1
            weakCache = cache
        }
        #expect(weakCache == nil)
    }
}
