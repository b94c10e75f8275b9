import Dispatch
import Foundation
import Testing
@testable import KVCache

#if canImport(Glibc)
import Glibc
#endif

/// Sets of stored keys that replace values in place, holding only their stripe's locks.
@Suite struct ConcurrencyMemoryCacheWriteTests {
    /// `replaceInPlace` as `setValue` calls it.
    static func replace<Value>(_ cache: MemoryCache<Int, Value>, _ value: Value, forKey key: Int, cost: Int64) -> Bool {
        cache.replaceInPlace(
            value, forKey: key, hash: cache.storage.stripeHash.unseeded(key), tableHash: cache.storage.tableHash(of: key),
            cost: cost)
    }

    /// Every invariant of the storage, the table and the lanes, after draining every lane.
    static func violations<Value>(_ cache: MemoryCache<Int, Value>) -> [String] {
        cache.withLock {
            cache.drainAllReads()
            return cache.storage.invariantViolations() + cache.storage.laneViolations()
        }
    }

    @Test func aReplacementDoesNotWaitForTheCacheLock() throws {
        let cache = try ConcurrencyMemoryCacheReadTests.filledCache()
        let done = DispatchSemaphore(value: 0)
        // Held as a long trim or another key's insertion would hold it.
        cache.mutex.lock()
        DispatchQueue.global().async {
            for key in 0..<1_000 { cache[key] = key + 1 }
            done.signal()
        }
        let finished = done.wait(timeout: .now() + 10) == .success
        cache.mutex.unlock()
        if !finished { done.wait() }
        #expect(finished)
        #expect((0..<1_000).allSatisfy { cache[$0] == $0 + 1 })
        let statistics = cache.statistics
        #expect(statistics.sets == 2_000)
        #expect(statistics.evictions[.replaced] == 1_000)
        #expect(statistics.count == 1_000)
        #expect(Self.violations(cache) == [])
    }

    @Test func aReplacementReachesThePolicyAsAUseWithTheLanesReads() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 10, autoTrimInterval: nil))
        for key in 0..<10 { cache[key] = key }
        #expect(cache.withLock { cache.storage.keysByRecency(in: .probation) } == Array((0..<9).reversed()))
        let sampledRequests = cache.withLock { cache.adaptive.gradient!.sampledRequests }
        cache[3] = 33
        #expect(Self.replace(cache, 34, forKey: 4, cost: 0))
        // Recorded in the lane, as a read is, until a drain (here the cache's lock
        // holder's: it drains its own lane first).
        let storage = cache.storage
        cache.mutex.lock()
        let beforeDrain = storage.keysByRecency(in: .protected)
        let buffered = storage.lane(storage.currentLaneIndex, stripe: storage.stripeIndex(for: 3)).buffered
        cache.mutex.unlock()
        #expect(beforeDrain == [])
        #expect(buffered >= 1)
        #expect(cache.withLock { cache.storage.keysByRecency(in: .protected) } == [4, 3])
        // A use, not a request: the shadows that move the window see reads and misses only.
        #expect(cache.withLock { cache.adaptive.gradient!.sampledRequests } == sampledRequests)
        #expect(cache[3] == 33 && cache[4] == 34)
        #expect(cache.count == 10)
        #expect(Self.violations(cache) == [])
    }

    @Test func aSetThatChangesTheCostOrANewKeyTakesTheCacheLock() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(.init(costLimit: 100, autoTrimInterval: nil))
        cache.setValue(1, forKey: 1, cost: 5)
        #expect(!Self.replace(cache, 2, forKey: 1, cost: 7))
        #expect(!Self.replace(cache, 2, forKey: 2, cost: 0))
        #expect(!Self.replace(cache, 2, forKey: 1, cost: Int64(UInt32.max)))
        #expect(cache[1] == 1 && cache.count == 1)
        cache.setValue(2, forKey: 1, cost: 7)
        #expect(cache.totalCost == 7)
        cache.setValue(3, forKey: 1, cost: 7)
        #expect(cache.totalCost == 7 && cache[1] == 3)
        // Costs too large for an entry to hold are kept by the slot alone.
        let large = Int64(UInt32.max) + 1
        let unbounded: MemoryCache<Int, Int> = try makeCache()
        unbounded.setValue(1, forKey: 1, cost: large)
        #expect(!Self.replace(unbounded, 2, forKey: 1, cost: large))
        unbounded.setValue(2, forKey: 1, cost: large)
        #expect(unbounded.totalCost == large && unbounded[1] == 2)
        #expect(Self.violations(cache) == [] && Self.violations(unbounded) == [])
    }

    @Test func noReplacementIsInPlaceOnceReadsTakeTheCacheLock() throws {
        let clock = ManualClock()
        let cache: MemoryCache<Int, Int> = try makeCache(.init(autoTrimInterval: nil), clock: clock)
        cache[1] = 1
        #expect(Self.replace(cache, 2, forKey: 1, cost: 0))
        cache.setValue(3, forKey: 2, expiration: .after(.seconds(60)))
        #expect(!Self.replace(cache, 4, forKey: 1, cost: 0))
        cache[1] = 5
        #expect(cache[1] == 5)
        let lru: MemoryCache<Int, Int> = try makeCache(.init(autoTrimInterval: nil, policy: .lru))
        #expect(!lru.replacesInPlace)
    }

    @Test func replacedValuesAreReleasedOffTheCallersThreadInBatches() throws {
        let recorder = DeinitRecorder()
        let cache: MemoryCache<Int, TrackedValue> = try makeCache(.init(countLimit: 1_000, autoTrimInterval: nil))
        for key in 0..<100 { cache.setValue(TrackedValue(key, recorder), forKey: key) }
        for key in 0..<100 {
            #expect(Self.replace(cache, TrackedValue(1_000 + key, recorder), forKey: key, cost: 0))
        }
        // Each stripe holds replaced values until its batch fills: all 16 together at
        // most a quarter of the count limit (15 values each for a limit of 1,000).
        #expect(cache.withLock { cache.storage.stripes.allSatisfy { $0.releaseBatchCount == 15 } })
        #expect(cache.withLock { cache.storage.stripes.allSatisfy { $0.retiredNodes.count < $0.releaseBatchCount } })
        cache.waitForBackgroundWork()
        let caller = pthread_self()
        #expect(recorder.ids == Set(0..<100))
        #expect(recorder.records.value.allSatisfy { pthread_equal($0.thread, caller) == 0 })
        #expect(cache.withLock { cache.storage.stripes.allSatisfy { $0.retiredNodes.isEmpty } })
    }

    @Test func replacedValuesAreReportedAndReleasedOnTheCallersThreadWhenConfigured() throws {
        let recorder = DeinitRecorder()
        let log = EvictionLog<Int, TrackedValue>()
        let cache: MemoryCache<Int, TrackedValue> = try makeCache(
            .init(autoTrimInterval: nil, releasesValuesInBackground: false, onEviction: log.callback))
        recorder.probedCache.withLock { $0 = cache }
        defer { recorder.probedCache.withLock { $0 = nil } }
        for key in 0..<10 { cache.setValue(TrackedValue(key, recorder), forKey: key) }
        for key in 0..<10 {
            #expect(Self.replace(cache, TrackedValue(100 + key, recorder), forKey: key, cost: 0))
        }
        #expect(log.reasons == Array(repeating: .replaced, count: 10))
        #expect(log.keys == Array(0..<10))
        let caller = pthread_self()
        #expect(recorder.ids == Set(0..<10))
        #expect(recorder.records.value.allSatisfy { pthread_equal($0.thread, caller) != 0 && !$0.cacheWasLocked })
        // Reported and released in the background: the cache's lock queues the release.
        let background: MemoryCache<Int, Int> = try makeCache(.init(autoTrimInterval: nil, onEviction: { _, _, _ in }))
        #expect(!background.replacesInPlace)
    }

    /// Keys 0..<1,000 of `cache`'s stripe `stripe`.
    static func keys<Value>(of cache: MemoryCache<Int, Value>, stripe: Int) -> [Int] {
        let storage = cache.storage
        return (0..<1_000).filter { storage.stripeIndex(forHash: storage.stripeHash.unseeded($0)) == stripe }
    }

    /// A replacement takes its stripe's write lock and its own lane's lock, no other
    /// lane's: with every other lane's held, as readers on other lanes hold theirs, a
    /// batch's worth of replacements less one (the one that ends a batch waits for a
    /// grace period) finishes.
    @Test(.enabled(if: ProcessInfo.processInfo.activeProcessorCount > 1, "one processor: one read lane"))
    func aReplacementTakesNoOtherLanesLock() throws {
        let cache = try ConcurrencyMemoryCacheReadTests.filledCache()
        let lanes = cache.storage.lanes
        let writer = LaneThread()
        defer { writer.stop() }
        let lane = writer.run { cache.storage.currentLaneIndex }
        let batch = cache.withLock { cache.storage.stripes[0].releaseBatchCount }
        let keys = Self.keys(of: cache, stripe: 0).prefix(batch - 1)
        #expect(keys.count == batch - 1 && batch > 2)
        let others = (0..<lanes.count).filter { $0 != lane }
        for other in others { for stripe in 0..<lanes.stripeCount { lanes[lane: other, stripe: stripe].lock() } }
        let done = DispatchSemaphore(value: 0)
        let replaced = Locked(0)
        DispatchQueue.global().async {
            let count = writer.run { keys.filter { Self.replace(cache, $0 + 1, forKey: $0, cost: 0) }.count }
            replaced.withLock { $0 = count }
            done.signal()
        }
        let finished = done.wait(timeout: .now() + 10) == .success
        for other in others { for stripe in 0..<lanes.stripeCount { lanes[lane: other, stripe: stripe].unlock() } }
        if !finished { done.wait() }
        #expect(finished)
        #expect(replaced.value == keys.count)
        #expect(keys.allSatisfy { cache[$0] == $0 + 1 })
        #expect(Self.violations(cache) == [])
    }

    /// A replaced value's node may still be read on another lane: the replacement that
    /// ends a batch waits until every lane has left the stripe (its grace period), and
    /// no value of the batch is released before.
    @Test(.enabled(if: ProcessInfo.processInfo.activeProcessorCount > 1, "one processor: one read lane"))
    func retiredValuesOutliveReadersOnOtherLanes() throws {
        let recorder = DeinitRecorder()
        let cache: MemoryCache<Int, TrackedValue> = try makeCache(.init(countLimit: 1_000, autoTrimInterval: nil))
        for key in 0..<1_000 { cache.setValue(TrackedValue(key, recorder), forKey: key) }
        let lanes = cache.storage.lanes
        let writer = LaneThread()
        defer { writer.stop() }
        let lane = writer.run { cache.storage.currentLaneIndex }
        let batch = cache.withLock { cache.storage.stripes[0].releaseBatchCount }
        let keys = Array(Self.keys(of: cache, stripe: 0).prefix(batch))
        let reader = (0..<lanes.count).first { $0 != lane }!
        // A reader of stripe 0 on another lane, in the middle of its look-up (a reader marks
        // its lane as used before it takes the lane's lock).
        lanes.register(lane: reader)
        lanes[lane: reader, stripe: 0].lock()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            writer.run { for key in keys { _ = Self.replace(cache, TrackedValue(1_000 + key, recorder), forKey: key, cost: 0) } }
            done.signal()
        }
        // Not a wait for work: the writer cannot finish while the lane is held, however long.
        let finishedWhileHeld = done.wait(timeout: .now() + 0.5) == .success
        let releasedWhileHeld = recorder.count
        lanes[lane: reader, stripe: 0].unlock()
        if !finishedWhileHeld { done.wait() }
        #expect(!finishedWhileHeld)
        #expect(releasedWhileHeld == 0)
        cache.waitForBackgroundWork()
        #expect(recorder.ids == Set(keys))
        #expect(keys.allSatisfy { cache[$0]?.id == 1_000 + $0 })
    }

    /// A grace period waits for the lanes a reader has used only, so its cost follows the
    /// threads that read, not the lanes there are: with the locks of every lane no thread
    /// has read on held, a full batch of replacements finishes.
    @Test func aGracePeriodSkipsLanesNoReaderHasUsed() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 1_000, autoTrimInterval: nil))
        for key in 0..<1_000 { cache[key] = key }
        let lanes = cache.storage.lanes
        let writer = LaneThread()
        defer { writer.stop() }
        _ = writer.run { cache.storage.currentLaneIndex }
        let used = lanes.usedLanes
        let unused = (0..<lanes.count).filter { used & 1 << UInt64($0) == 0 }
        try #require(!unused.isEmpty, "every one of \(lanes.count) lanes is used")
        let batch = cache.withLock { cache.storage.stripes[0].releaseBatchCount }
        let keys = Array(Self.keys(of: cache, stripe: 0).prefix(batch))
        #expect(keys.count == batch)
        for lane in unused { lanes[lane: lane, stripe: 0].lock() }
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            writer.run { for key in keys { _ = Self.replace(cache, key + 1, forKey: key, cost: 0) } }
            done.signal()
        }
        let finished = done.wait(timeout: .now() + 10) == .success
        for lane in unused { lanes[lane: lane, stripe: 0].unlock() }
        if !finished { done.wait() }
        #expect(finished)
        #expect(keys.allSatisfy { cache[$0] == $0 + 1 })
        #expect(Self.violations(cache) == [])
    }

    /// Values with references, strings for keys, tables that grow and shrink: readers,
    /// replacers, inserters and removers on several threads read only values stored for
    /// their key (under AddressSanitizer, no node is used after it is freed).
    @Test func retiredNodesAreFreedOnlyWhenNoReaderIsOnThem() throws {
        let cache: MemoryCache<String, [Int]> = try makeCache(.init(countLimit: 3_000, autoTrimInterval: nil))
        let wrong = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var state = UInt64(thread + 1) &* 0x9E37_79B9_7F4A_7C15
            var seen = 0
            for step in 0..<30_000 {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                let key = Int(state % 4_000)
                let name = "a key long enough for the heap \(key)"
                switch state >> 61 {
                case 0: cache[name] = nil
                case 1, 2: cache[name] = [key, step]
                default:
                    if let value = cache[name], value.first != key { seen += 1 }
                }
            }
            wrong.withLock { $0 += seen }
        }
        #expect(wrong.value == 0)
        #expect(cache.count <= 3_000)
        cache.withLock { cache.drainAllReads() }
        #expect(cache.withLock { cache.storage.invariantViolations() + cache.storage.laneViolations() } == [])
    }

    /// Readers, replacers, inserters and removers on several threads: every value read
    /// is one stored for its key, and the storage stays sound (under ThreadSanitizer, in
    /// CI, no access races).
    @Test func replacementsBesideReadsInsertionsAndRemovalsKeepTheCacheSound() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 500, autoTrimInterval: nil))
        for key in 0..<500 { cache[key] = key << 20 }
        let wrong = Locked(0)
        let threads = 4
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var state = UInt64(thread + 1) &* 0x9E37_79B9_7F4A_7C15
            var seen = 0
            for step in 0..<20_000 {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                let key = Int(state % 600)
                switch state >> 60 {
                case 0: cache[key] = nil
                case 1, 2, 3: cache[key] = key << 20 | step & 0xFFFFF
                default:
                    if let value = cache[key], value >> 20 != key { seen += 1 }
                }
            }
            wrong.withLock { $0 += seen }
        }
        #expect(wrong.value == 0)
        #expect(cache.count <= 500)
        #expect(Self.violations(cache) == [])
        let statistics = cache.statistics
        #expect(statistics.evictions[.replaced, default: 0] > 0)
    }
}
