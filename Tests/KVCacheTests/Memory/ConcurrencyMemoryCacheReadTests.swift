import Dispatch
import Foundation
import Testing
@testable import KVCache

/// Reads that do not wait for the cache's lock (the adaptive policy's striped table).
@Suite struct ConcurrencyMemoryCacheReadTests {
    /// A cache holding keys 0..<1,000, each its own value, whose hits skip the cache's lock.
    static func filledCache() throws -> MemoryCache<Int, Int> {
        let cache: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 1_000, autoTrimInterval: nil))
        for key in 0..<1_000 { cache[key] = key }
        return cache
    }

    /// Reads a lane's buffer holds.
    static let capacity = LaneStripe.bufferCapacity

    /// `filledCache()` and two threads that read on different lanes, with their lanes.
    static func cacheReadOnTwoLanes() throws -> (MemoryCache<Int, Int>, LaneThread, Int, LaneThread, Int) {
        let cache = try filledCache()
        let (first, firstLane, second, secondLane) = LaneThread.twoOnDifferentLanes(of: cache.storage)
        return (cache, first, firstLane, second, secondLane)
    }

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
        let cache = try Self.filledCache()
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

    /// A reader takes only its own thread's lane's locks: with every other lane's held,
    /// as readers on other threads hold theirs, its reads finish, and count in its lane.
    @Test(.enabled(if: ProcessInfo.processInfo.activeProcessorCount > 1, "one processor: one read lane"))
    func aHitDoesNotWaitForReadersOnOtherLanes() throws {
        let cache = try Self.filledCache()
        let lanes = cache.storage.lanes
        #expect(lanes.count >= 2)
        let stripes = 0..<lanes.stripeCount
        let readerLane = Locked(-1)
        let laneKnown = DispatchSemaphore(value: 0)
        let othersHeld = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let hits = Locked(0)
        Thread.detachNewThread {
            readerLane.withLock { $0 = cache.storage.currentLaneIndex }
            laneKnown.signal()
            othersHeld.wait()
            var found = 0
            for key in 0..<1_000 where cache.value(forKey: key) == key { found += 1 }
            hits.withLock { $0 = found }
            done.signal()
        }
        laneKnown.wait()
        let lane = readerLane.value
        #expect((0..<lanes.count).contains(lane))
        let others = (0..<lanes.count).filter { $0 != lane }
        for other in others { for stripe in stripes { lanes[lane: other, stripe: stripe].lock() } }
        othersHeld.signal()
        let finished = done.wait(timeout: .now() + 10) == .success
        for other in others { for stripe in stripes { lanes[lane: other, stripe: stripe].unlock() } }
        if !finished { done.wait() }
        #expect(finished)
        #expect(hits.value == 1_000)
        let laneHits = stripes.reduce(0) { total, stripe in
            lanes[lane: lane, stripe: stripe].lock()
            defer { lanes[lane: lane, stripe: stripe].unlock() }
            return total + lanes[lane: lane, stripe: stripe].hits
        }
        #expect(laneHits == 1_000)
        #expect(cache.statistics.hits == 1_000)
        #expect(cache.withLock { cache.storage.invariantViolations() } == [])
    }

    /// Reads of `count` keys of stripe `stripe`, cycling through them, from `thread`.
    static func read(_ cache: MemoryCache<Int, Int>, stripe: Int, count: Int, on thread: LaneThread) {
        let storage = cache.storage
        let keys = (0..<1_000).filter { storage.stripeIndex(forHash: storage.stripeHash.unseeded($0)) == stripe }
        thread.run {
            for read in 0..<count { precondition(cache[keys[read % keys.count]] != nil) }
        }
    }

    static func buffered(_ cache: MemoryCache<Int, Int>, lane: Int, stripe: Int) -> Int {
        let part = cache.storage.lanes[lane: lane, stripe: stripe]
        part.lock()
        defer { part.unlock() }
        return part.buffered
    }

    static func dropped(_ cache: MemoryCache<Int, Int>, lane: Int) -> Int {
        (0..<cache.storage.lanes.stripeCount).reduce(0) { total, stripe in
            let part = cache.storage.lanes[lane: lane, stripe: stripe]
            part.lock()
            defer { part.unlock() }
            return total + part.dropped
        }
    }

    /// Each lane drains its own full buffer, and only its own: no lane replays another's
    /// reads, so no one thread's replay caps the reads of all.
    @Test(.enabled(if: ProcessInfo.processInfo.activeProcessorCount > 1, "one processor: one read lane"))
    func eachLaneDrainsItsOwnReads() throws {
        let (cache, first, firstLane, second, secondLane) = try Self.cacheReadOnTwoLanes()
        defer { first.stop(); second.stop() }
        Self.read(cache, stripe: 3, count: Self.capacity - 1, on: first)
        Self.read(cache, stripe: 3, count: Self.capacity, on: second)
        #expect(Self.buffered(cache, lane: firstLane, stripe: 3) == Self.capacity - 1)
        #expect(Self.buffered(cache, lane: secondLane, stripe: 3) == 0)
        #expect(cache.storage.laneHeader(firstLane).pendingStripes == 1 << 3)
        #expect(cache.storage.laneHeader(secondLane).pendingStripes == 0)
        Self.read(cache, stripe: 3, count: 1, on: first)
        #expect(Self.buffered(cache, lane: firstLane, stripe: 3) == 0)
        #expect(cache.statistics.droppedReads == 0)
        #expect(cache.withLock { cache.storage.invariantViolations() } == [])
    }

    /// While the drain is held (the cache's lock busy), reads of every lane complete:
    /// a full buffer drops its reads and counts them, never waits. When the lock is
    /// free again, a later read drains the buffer.
    @Test(.enabled(if: ProcessInfo.processInfo.activeProcessorCount > 1, "one processor: one read lane"))
    func readsOfEveryLaneCompleteWhileTheDrainIsHeld() throws {
        let (cache, first, firstLane, second, secondLane) = try Self.cacheReadOnTwoLanes()
        defer { first.stop(); second.stop() }
        let extra = 3 * ConcurrencyMemoryCacheReadTests.retry + 5
        let finished = Locked(0)
        cache.mutex.lock()
        let group = DispatchGroup()
        for thread in [first, second] {
            DispatchQueue.global().async(group: group) {
                Self.read(cache, stripe: 5, count: Self.capacity + extra, on: thread)
                finished.withLock { $0 += 1 }
            }
        }
        let completed = group.wait(timeout: .now() + 10) == .success
        cache.mutex.unlock()
        if !completed { group.wait() }
        #expect(completed)
        #expect(finished.value == 2)
        for lane in [firstLane, secondLane] {
            #expect(Self.buffered(cache, lane: lane, stripe: 5) == Self.capacity)
            #expect(Self.dropped(cache, lane: lane) == extra)
        }
        #expect(cache.statistics.droppedReads == 2 * extra)
        // The next retry finds the lock free and drains; the reads after it are recorded.
        Self.read(cache, stripe: 5, count: Self.retry, on: first)
        #expect(Self.buffered(cache, lane: firstLane, stripe: 5) < Self.capacity)
        #expect(Self.buffered(cache, lane: secondLane, stripe: 5) == Self.capacity)
        #expect(cache.withLock { cache.storage.invariantViolations() } == [])
    }

    /// Dropped reads between two tries to drain.
    static let retry = MemoryCache<Int, Int>.drainRetryInterval

    /// A write drains the writer's own lane first (so one thread's reads and writes
    /// reach the policy in order), and leaves other lanes' reads to their own drains.
    @Test(.enabled(if: ProcessInfo.processInfo.activeProcessorCount > 1, "one processor: one read lane"))
    func aWriteDrainsTheWritersLaneOnly() throws {
        let (cache, writer, writerLane, other, otherLane) = try Self.cacheReadOnTwoLanes()
        defer { writer.stop(); other.stop() }
        Self.read(cache, stripe: 3, count: 5, on: writer)
        Self.read(cache, stripe: 3, count: 7, on: other)
        // A new key: its set takes the cache's lock (a stored key's is replaced in place).
        writer.run { cache[1_000] = 1_000 }
        #expect(Self.buffered(cache, lane: writerLane, stripe: 3) == 0)
        #expect(Self.buffered(cache, lane: otherLane, stripe: 3) == 7)
        #expect(cache.storage.laneHeader(otherLane).pendingStripes == 1 << 3)
        cache.withLock { cache.drainAllReads() }
        #expect(Self.buffered(cache, lane: otherLane, stripe: 3) == 0)
        #expect(cache.withLock { cache.storage.invariantViolations() } == [])
    }

    /// With one thread nothing is dropped, however many reads: its decisions stay
    /// deterministic.
    @Test func aLoneReaderDropsNothing() throws {
        let cache = try Self.filledCache()
        let reader = LaneThread()
        defer { reader.stop() }
        let lane = reader.run { cache.storage.currentLaneIndex }
        Self.read(cache, stripe: 6, count: LaneStripe.bufferCapacity * 200 + 3, on: reader)
        #expect(Self.buffered(cache, lane: lane, stripe: 6) == 3)
        #expect(cache.statistics.droppedReads == 0)
    }

    /// Writers of a stripe hold its write lock, which readers never take: with every
    /// stripe's held, as writers in the middle of a change hold them, reads of every key finish.
    @Test func aHitDoesNotWaitForWriters() throws {
        let cache = try Self.filledCache()
        let stripes = cache.storage.stripes
        let done = DispatchSemaphore(value: 0)
        let hits = Locked(0)
        for stripe in stripes { stripe.writeLock.lock() }
        Thread.detachNewThread {
            let found = (0..<1_000).filter { cache.value(forKey: $0) == $0 }.count
            hits.withLock { $0 = found }
            done.signal()
        }
        let finished = done.wait(timeout: .now() + 10) == .success
        for stripe in stripes { stripe.writeLock.unlock() }
        if !finished { done.wait() }
        #expect(finished)
        #expect(hits.value == 1_000)
    }

    /// A table that grows is copied into new nodes: a reader that finds it mid-growth still
    /// finds every key stored before its read, never a false miss.
    @Test func readsDuringGrowthFindEveryStoredKey() throws {
        let cache: MemoryCache<String, String> = try makeCache(.init(autoTrimInterval: nil))
        let stored = Locked(0)
        let total = 20_000
        let misses = Locked(0)
        let done = DispatchSemaphore(value: 0)
        // Threads of their own: the readers wait for the writer, which a pool of as many
        // threads as processors might never start.
        Thread.detachNewThread {
            for key in 0..<total {
                cache["key-\(key)-of-a-longer-string"] = "value-\(key)"
                stored.withLock { $0 = key + 1 }
            }
            done.signal()
        }
        for thread in 1...2 {
            Thread.detachNewThread {
                var state = UInt64(thread) &* 0x9E37_79B9_7F4A_7C15
                var missed = 0
                while stored.value < total {
                    let known = stored.value
                    guard known > 0 else { continue }
                    state ^= state << 13; state ^= state >> 7; state ^= state << 17
                    let key = Int(state % UInt64(known))
                    if cache["key-\(key)-of-a-longer-string"] != "value-\(key)" { missed += 1 }
                }
                misses.withLock { $0 += missed }
                done.signal()
            }
        }
        for _ in 0..<3 { done.wait() }
        #expect(misses.value == 0)
        #expect(cache.count == total)
        #expect(cache.withLock { cache.storage.invariantViolations() + cache.storage.laneViolations() } == [])
    }

    /// The values of `readsSkipCacheLock` in every lane's part of every stripe.
    static func readsSkipCacheLock(_ cache: MemoryCache<Int, Int>) -> Set<Bool> {
        var values: Set<Bool> = []
        cache.storage.lanes.forEach { part in
            part.lock()
            values.insert(part.readsSkipCacheLock)
            part.unlock()
        }
        return values
    }

    @Test func readsTakeTheLockOnceEntriesCanExpireOrAgesAreTracked() throws {
        let clock = ManualClock()
        let cache: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 100, autoTrimInterval: nil), clock: clock)
        cache[1] = 1
        #expect(Self.readsSkipCacheLock(cache) == [true])
        cache.setValue(2, forKey: 2, expiration: .after(.seconds(1)))
        #expect(Self.readsSkipCacheLock(cache) == [false])
        clock.advance(by: 2)
        #expect(cache[2] == nil)  // the read saw the deadline
        let aged: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 100, ageLimit: .seconds(5), autoTrimInterval: nil))
        #expect(Self.readsSkipCacheLock(aged) == [false])
        let lru: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 100, autoTrimInterval: nil, policy: .lru))
        #expect(lru.storage.stripes.count == 1 && lru.storage.lanes.count == 1)
        #expect(Self.readsSkipCacheLock(lru) == [false])
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
