import Foundation
import Testing
@testable import KVCache

#if canImport(Glibc)
import Glibc
#endif

@Suite struct MemoryCacheReleaseTests {
    @Test func evictedValuesAreReleasedOffTheCallersThread() throws {
        let recorder = DeinitRecorder()
        let cache: MemoryCache<Int, TrackedValue> = try makeCache(.init(countLimit: 2, autoTrimInterval: nil, policy: .lru))
        for key in 0..<100 { cache.setValue(TrackedValue(key, recorder), forKey: key) }
        cache[99] = nil          // removed
        cache[98] = TrackedValue(-1, recorder)  // replaced
        cache.waitForBackgroundWork()
        let caller = pthread_self()
        #expect(recorder.ids == Set(0..<100).subtracting([-1]))
        #expect(recorder.records.value.allSatisfy { pthread_equal($0.thread, caller) == 0 })
    }

    @Test func removeAllReleasesTheOldEntriesInTheBackground() throws {
        let recorder = DeinitRecorder()
        let cache: MemoryCache<Int, TrackedValue> = try makeCache()
        for key in 0..<1_000 { cache.setValue(TrackedValue(key, recorder), forKey: key) }
        cache.removeAll()
        cache.waitForBackgroundWork()
        let caller = pthread_self()
        #expect(recorder.count == 1_000)
        #expect(recorder.records.value.allSatisfy { pthread_equal($0.thread, caller) == 0 })
    }

    @Test func valuesAreReleasedOnTheCallersThreadOutsideTheLockWhenConfigured() throws {
        let recorder = DeinitRecorder()
        let cache: MemoryCache<Int, TrackedValue> = try makeCache(
            .init(countLimit: 2, autoTrimInterval: nil, releasesValuesInBackground: false, policy: .lru))
        recorder.probedCache.withLock { $0 = cache }
        // The recorder holds the cache that holds values holding the recorder.
        defer { recorder.probedCache.withLock { $0 = nil } }
        for key in 0..<10 { cache.setValue(TrackedValue(key, recorder), forKey: key) }
        cache[9] = nil
        cache[8] = TrackedValue(-1, recorder)
        let caller = pthread_self()
        #expect(recorder.ids == Set(0..<10))
        #expect(recorder.records.value.allSatisfy { pthread_equal($0.thread, caller) != 0 })
        #expect(recorder.records.value.allSatisfy { !$0.cacheWasLocked })
    }

    @Test func pendingReleasesGoInSmallBatchesBoundedByTheLimits() throws {
        // With a small count limit each eviction is handed over at once,
        // so the batch never holds much more than the cache itself.
        let recorder = DeinitRecorder()
        let cache: MemoryCache<Int, TrackedValue> = try makeCache(.init(countLimit: 4, autoTrimInterval: nil))
        for key in 0..<10 { cache.setValue(TrackedValue(key, recorder), forKey: key) }
        #expect(cache.withLock { cache.pendingReleases.count } == 0)
        let large: MemoryCache<Int, TrackedValue> = try makeCache(.init(countLimit: 10_000, autoTrimInterval: nil))
        for key in 0..<10_100 { large.setValue(TrackedValue(key, recorder), forKey: key) }
        #expect(large.withLock { large.pendingReleases.count } < 64)
    }

    @Test func theAutoTrimHandsOverValuesWaitingInABatch() throws {
        let recorder = DeinitRecorder()
        let cache: MemoryCache<Int, TrackedValue> = try makeCache(.init(countLimit: 1_000, autoTrimInterval: nil, policy: .lru))
        for key in 0..<1_003 { cache.setValue(TrackedValue(key, recorder), forKey: key) }
        #expect(cache.withLock { cache.pendingReleases.count } == 3)
        cache.autoTrim()
        cache.releaser.waitUntilIdle()
        #expect(recorder.ids == [0, 1, 2])
    }

    @Test func theEvictionCallbackReportsEveryReason() throws {
        let clock = ManualClock()
        let log = EvictionLog<String, Int>()
        let cache: MemoryCache<String, Int> = try makeCache(
            .init(countLimit: 3, costLimit: 100, autoTrimInterval: nil, policy: .lru, onEviction: log.callback), clock: clock)
        cache.setValue(1, forKey: "count1")
        cache.setValue(2, forKey: "count2")
        cache.setValue(3, forKey: "count3")
        cache.setValue(4, forKey: "big", cost: 90)      // evicts count1 (count)
        cache.setValue(5, forKey: "bigger", cost: 20)   // 4 entries: evicts count2; cost 110: count3, big
        cache.setValue(6, forKey: "bigger", cost: 20)   // replaced
        cache.setValue(7, forKey: "ttl", expiration: .after(.seconds(1)))
        clock.advance(by: 2)
        _ = cache["ttl"]                                // expired
        cache.setValue(8, forKey: "gone")
        cache.removeValue(forKey: "gone")               // removed
        try cache.trim(toFraction: 0)                        // pressure
        #expect(log.entries.value.map { "\($0.key):\($0.reason)" } == [
            "count1:count", "count2:count", "count3:cost", "big:cost", "bigger:replaced",
            "ttl:expired", "gone:removed", "bigger:pressure",
        ])
        let statistics = cache.statistics
        #expect(statistics.evictions == [.count: 2, .cost: 2, .replaced: 1, .expired: 1, .removed: 1, .pressure: 1])
    }

    @Test func theEvictionCallbackRunsOutsideTheLockAndMayUseTheCache() throws {
        let seen = Locked<[Int]>([])
        let cacheBox = Locked<MemoryCache<Int, Int>?>(nil)
        let cache: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 1, autoTrimInterval: nil, onEviction: { key, _, _ in
            // Re-entering the cache would deadlock if the lock were held.
            let count = cacheBox.value?.count ?? -1
            seen.withLock { $0.append(count) }
            _ = key
        }))
        cacheBox.withLock { $0 = cache }
        cache[1] = 1
        cache[2] = 2
        cache.removeAll()
        #expect(seen.value == [1, 0])
        cacheBox.withLock { $0 = nil }
    }

    @Test func removeAllReportsEachEntryAsRemoved() throws {
        let log = EvictionLog<Int, Int>()
        let cache: MemoryCache<Int, Int> = try makeCache(.init(autoTrimInterval: nil, onEviction: log.callback))
        for key in 0..<5 { cache[key] = key }
        cache.removeAll()
        #expect(log.keys.sorted() == Array(0..<5))
        #expect(Set(log.reasons) == [.removed])
    }

    @Test func valuesReportedToTheCallbackAreStillReleasedInTheBackground() throws {
        let recorder = DeinitRecorder()
        let log = EvictionLog<Int, TrackedValue>()
        let cache: MemoryCache<Int, TrackedValue> = try makeCache(
            .init(countLimit: 1, autoTrimInterval: nil, policy: .lru, onEviction: log.callback))
        for key in 0..<50 { cache.setValue(TrackedValue(key, recorder), forKey: key) }
        cache.waitForBackgroundWork()
        let caller = pthread_self()
        #expect(log.keys == Array(0..<49))
        #expect(recorder.ids == Set(0..<49))
        #expect(recorder.records.value.allSatisfy { pthread_equal($0.thread, caller) == 0 })
    }

    @Test func aDeallocatedCacheReleasesItsValuesInTheBackground() throws {
        let recorder = DeinitRecorder()
        let releaser: BackgroundReleaser
        do {
            let cache: MemoryCache<Int, TrackedValue> = try makeCache(.init(countLimit: 5, autoTrimInterval: nil))
            for key in 0..<10 { cache.setValue(TrackedValue(key, recorder), forKey: key) }
            releaser = cache.releaser
        }
        releaser.waitUntilIdle()
        let caller = pthread_self()
        #expect(recorder.count == 10)
        #expect(recorder.records.value.allSatisfy { pthread_equal($0.thread, caller) == 0 })
    }
}
