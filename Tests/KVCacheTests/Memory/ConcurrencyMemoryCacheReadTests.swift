import Dispatch
import Foundation
import Testing
@testable import KVCache

/// Reads that do not wait for the cache's lock (the adaptive policy's striped table).
@Suite struct ConcurrencyMemoryCacheReadTests {
    /// Holds the cache's lock, as a long write or trim would, and reads on another thread.
    /// Returns whether the reads finished within a bound far above their cost.
    static func readsFinishWhileTheLockIsHeld(_ cache: MemoryCache<Int, Int>, keys: Range<Int>) -> (Bool, Int) {
        let hits = Locked(0)
        let done = DispatchSemaphore(value: 0)
        cache.mutex.lock()
        DispatchQueue.global().async {
            var found = 0
            for key in keys where cache.value(forKey: key) == key { found += 1 }
            hits.withLock { $0 = found }
            done.signal()
        }
        let finished = done.wait(timeout: .now() + 10) == .success
        cache.mutex.unlock()
        if !finished { done.wait() }
        return (finished, hits.value)
    }

    @Test func aHitDoesNotWaitForTheCacheLock() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 1_000, autoTrimInterval: nil))
        for key in 0..<1_000 { cache[key] = key }
        // 5,000 reads fill the read buffers many times over while the lock is held:
        // the replays are skipped and reads beyond a full buffer are dropped, never waited for.
        let (finished, hits) = Self.readsFinishWhileTheLockIsHeld(cache, keys: 0..<5_000)
        #expect(finished)
        #expect(hits == 1_000)
        let statistics = cache.statistics
        #expect(statistics.hits == 1_000)
        #expect(statistics.misses == 4_000)
        #expect(cache.withLock { cache.storage.invariantViolations() } == [])
        // The dropped reads cost the policy only precision: the cache still works.
        cache[5_000] = 5_000
        #expect(cache.count == 1_000)
        // One entry left for the new one, and the replayed reads left the lists sound.
        #expect(cache.statistics.evictions[.count] == 1)
        #expect(cache.statistics.sets == 1_001)
        #expect(cache.withLock { cache.storage.invariantViolations() } == [])
    }

    @Test func readsTakeTheLockOnceEntriesCanExpireOrAgesAreTracked() throws {
        let clock = ManualClock()
        let cache: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 100, autoTrimInterval: nil), clock: clock)
        cache[1] = 1
        #expect(cache.storage.stripes.allSatisfy { $0.readsSkipCacheLock })
        cache.setValue(2, forKey: 2, expiration: .after(.seconds(1)))
        #expect(cache.storage.stripes.allSatisfy { !$0.readsSkipCacheLock })
        clock.advance(by: 2)
        #expect(cache[2] == nil)  // the read saw the deadline
        let aged: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 100, ageLimit: .seconds(5), autoTrimInterval: nil))
        #expect(aged.storage.stripes.allSatisfy { !$0.readsSkipCacheLock })
        let lru: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 100, autoTrimInterval: nil, policy: .lru))
        #expect(lru.storage.stripes.count == 1)
        #expect(!lru.storage.stripes[0].readsSkipCacheLock)
    }

    @Test func readersRacingWritersAndEvictionsSeeOnlyTheirKeysValues() throws {
        let cache: MemoryCache<Int, [Int]> = try makeCache(.init(countLimit: 300, autoTrimInterval: nil))
        DispatchQueue.concurrentPerform(iterations: 6) { thread in
            for step in 0..<5_000 {
                let key = (step &* 7 &+ thread &* 131) % 1_000
                if thread < 2 {
                    cache[key] = [key, step]
                    if step.isMultiple(of: 997) { try? cache.trim(toCount: 200) }
                    if step.isMultiple(of: 13) { cache[key &+ 1] = nil }
                } else if let value = cache[key] {
                    precondition(value.first == key, "read \(value) for \(key)")
                }
            }
        }
        #expect(cache.count <= 300)
        #expect(cache.withLock { cache.storage.invariantViolations() } == [])
        let statistics = cache.statistics
        #expect(statistics.sets == statistics.count + statistics.totalEvictions)
    }
}
