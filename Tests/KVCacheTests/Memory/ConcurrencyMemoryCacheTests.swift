import KVCacheTestSupport
import Dispatch
import Foundation
import Testing
@testable import KVCache

/// Hammering from many threads; CI runs these under ThreadSanitizer.
@Suite struct ConcurrencyMemoryCacheTests {
    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func manyThreadsKeepTheCacheConsistent(policy: EvictionPolicy) throws {
        let clock = ManualClock()
        let evictions = Locked(0)
        let cache: MemoryCache<Int, [Int]> = try makeCache(
            .init(
                countLimit: 200, costLimit: 5_000, lowWatermark: 0.8, autoTrimInterval: nil, policy: policy,
                onEviction: { _, _, _ in evictions.withLock { $0 += 1 } }),
            clock: clock)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var generator = SeededGenerator(seed: UInt64(thread))
            for step in 0..<3_000 {
                if thread == 0 {
                    // Stands in for the timer, so the end state is quiet and exact.
                    clock.advance(by: 0.01)
                    cache.autoTrim()
                    continue
                }
                let key = Int(generator.next() % 500)
                switch generator.next() % 10 {
                case 0..<5:
                    if let value = cache[key] { precondition(value.first == key) }
                case 5..<8:
                    cache.setValue(
                        [key, step], forKey: key, cost: Int64(generator.next() % 50),
                        expiration: step.isMultiple(of: 7) ? .after(.seconds(0.05)) : .never)
                case 8:
                    cache.removeValue(forKey: key)
                default:
                    switch step % 100 {
                    case 0: try? cache.trim(toFraction: 0.5)
                    case 1: cache.removeAll()
                    case 2: try? cache.setCountLimit(100 + Int(generator.next() % 200))
                    case 3: try? cache.trim(toAge: .seconds(60))
                    default: _ = cache.statistics
                    }
                }
            }
        }
        cache.waitForBackgroundWork()
        let statistics = cache.statistics
        #expect(statistics.count <= cache.countLimit)
        #expect(statistics.totalCost <= 5_000)
        #expect(statistics.hits + statistics.misses > 0)
        // Every insertion either is still in the cache or left it in one of the counted ways.
        #expect(statistics.sets == statistics.count + statistics.totalEvictions)
        #expect(statistics.totalEvictions == evictions.value)
        // The total cost matches the entries' costs, and the lists match the table.
        #expect(cache.withLock { cache.storage.invariantViolations() } == [])
    }

    @Test func backgroundReleaseAndTheTimerRaceWithCallers() throws {
        let recorder = DeinitRecorder()
        let cache = try MemoryCache<Int, TrackedValue>(configuration: .init(countLimit: 50, autoTrimInterval: .seconds(0.001)))
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for step in 0..<2_000 {
                let key = thread * 10_000 + step
                cache.setValue(TrackedValue(key, recorder), forKey: key, expiration: .after(.seconds(0.002)))
                _ = cache[key - 1]
                if step.isMultiple(of: 500) { cache.waitForBackgroundWork() }
            }
        }
        cache.removeAll()
        cache.waitForBackgroundWork()
        #expect(recorder.count == 8_000)
        #expect(cache.count == 0)
    }
}
