import CProcessor
import Synchronization

// The adaptive policy's (W-TinyLFU's) steps. They run with the lock held, and only
// when `isAdaptive`.
extension MemoryCache {
    /// Records a read hit of the entry at `index`, whose key has the policy hash `hash`:
    /// counts the use, moves the entry up within the segments, and tells the climber.
    @inlinable
    func recordAdaptiveHit(at index: Int32, hash: UInt32) {
        // Without a limit only trims evict, in recency order: counting would serve nothing.
        guard policyCountsUses else {
            storage.moveToFront(index, in: storage.segment(at: index))
            return
        }
        recordAdaptiveUse(at: index, hash: hash)
        adaptive.record(hit: true, entries: storage.count)
    }

    /// Dropped reads between two tries to drain a full buffer whose drain was busy: a
    /// power of two. Each try takes the cache's lock's line, which every lane shares.
    @inlinable static var drainRetryInterval: Int { 16 }

    /// Drains lane `lane`'s (the calling thread's) read buffers into the policy if no
    /// other thread holds the cache's lock; otherwise leaves them, and later reads that
    /// find a buffer full are dropped until a drain. Called without any lock.
    @inlinable
    func drainReadsIfIdle(lane: Int) {
        guard mutex.tryLock() else { return }
        if measuresSerialSections {
            let start = kvcache_monotonic_nanoseconds()
            drainReads(ofLane: lane)
            serialSectionCounters.recordDrain(start: start)
        } else {
            drainReads(ofLane: lane)
        }
        unlockAfterChange()
    }

    /// Drains the calling thread's read buffers, so that what the lock holder does next
    /// (a write, an eviction, a trim) sees its reads: single-threaded use keeps the
    /// policy's decisions, stripe order aside. Other lanes' reads wait for their own
    /// drains. Called with the cache's lock held.
    @inlinable
    func replayPendingReads() {
        guard isAdaptive else { return }
        drainReads(ofLane: storage.currentLaneIndex)
    }

    /// Replays the reads in lane `lane`'s buffers of the stripes it marked. Called with
    /// the cache's lock held.
    @inlinable
    func drainReads(ofLane lane: Int) {
        var pending = storage.laneHeader(lane).takePendingStripes()
        while pending != 0 {
            let stripe = pending.trailingZeroBitCount
            pending &= pending &- 1
            replayReads(of: storage.lane(lane, stripe: stripe))
        }
    }

    /// Drains every lane's read buffers (tests, and operations that want the policy to
    /// see every read so far). Called with the cache's lock held.
    func drainAllReads() {
        guard isAdaptive else { return }
        for lane in 0..<storage.lanes.count { drainReads(ofLane: lane) }
    }

    /// Tells the policy about the reads of a stripe that a lane recorded. A slot freed
    /// or reused since its read was recorded is skipped or credited to its new entry:
    /// the policy's precision, never a value, is at stake. Called with the cache's lock.
    @inlinable
    func replayReads(of part: LaneStripe) {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: LaneStripe.bufferCapacity) { reads in
            part.lock()
            let count = part.takeReads(into: reads)
            part.unlock()
            // Starts loading the lines the replay writes (each entry's link, which holds
            // its segment and cost, then its neighbours' links and, unless the link says
            // its counters are saturated, its sketch block) for all the reads before it
            // uses one: the loads overlap, where the replay's own would wait one cache
            // miss after another. Prefetches, not loads, so that the processor need not
            // wait for them to retire.
            let policyHash = adaptive.hash
            for read in reads.prefix(count) {
                let index = Self.slot(ofRecordedUse: read)
                guard index < storage.initializedCount else { continue }
                kvcache_prefetch(storage.link(at: index))
            }
            let marksHold = storage.saturationEpoch == adaptive.sketch.epoch
            for read in reads.prefix(count) {
                let index = Self.slot(ofRecordedUse: read)
                guard index < storage.initializedCount else { continue }
                let link = storage.link(at: index).pointee
                if link.previous >= 0 { kvcache_prefetch(storage.link(at: link.previous)) }
                if link.next >= 0 { kvcache_prefetch(storage.link(at: link.next)) }
                if !(marksHold && link.isSaturated) {
                    kvcache_prefetch(adaptive.sketch.block(policyHash.seeded(UInt32(truncatingIfNeeded: read >> 32))))
                }
            }
            for read in reads.prefix(count) {
                let index = Self.slot(ofRecordedUse: read)
                guard storage.isLive(index) else { continue }
                let hash = policyHash.seeded(UInt32(truncatingIfNeeded: read >> 32))
                if UInt32(truncatingIfNeeded: read) & LaneStripe.writeMark == 0 {
                    recordAdaptiveHit(at: index, hash: hash)
                } else {
                    recordAdaptiveReplacement(at: index, hash: hash)
                }
            }
        }
    }

    /// The slot of a use recorded in a read buffer (`LaneStripe.buffer`).
    @inlinable
    static func slot(ofRecordedUse use: UInt64) -> Int32 {
        Int32(bitPattern: UInt32(truncatingIfNeeded: use) & ~LaneStripe.writeMark)
    }

    /// Records a value replaced in place (`replaceInPlace`) at `index`: a use, as a
    /// replacement under the cache's lock counts one, but not a hit for the climber.
    @inlinable
    func recordAdaptiveReplacement(at index: Int32, hash: UInt32) {
        guard policyCountsUses else {
            storage.moveToFront(index, in: storage.segment(at: index))
            return
        }
        recordAdaptiveUse(at: index, hash: hash)
    }

    /// Counts a use of an entry and moves it: to the front of the window or of
    /// the protected segment, or from probation to protected (which may push the
    /// protected segment's oldest back to probation).
    @inlinable
    func recordAdaptiveUse(at index: Int32, hash: UInt32) {
        countUse(at: index, hash: hash)
        switch storage.segment(at: index) {
        case .window, .protected:
            storage.moveToFront(index, in: storage.segment(at: index))
        case .probation:
            storage.move(index, to: .protected)
            let maximum = adaptive.protectedMaximum
            while AdaptivePolicy<Key>.size(storage.protectedSize, exceeds: maximum),
                  let demoted = storage.tail(of: .protected) {
                storage.move(demoted, to: .probation)
            }
        }
    }

    /// Counts a use of the entry at `index` in the sketch, unless its link says its
    /// counters are all at the maximum, where counting changes nothing (under Zipf-like
    /// reads, most of them): that saves the increment and a cache miss on the sketch.
    @inlinable
    func countUse(at index: Int32, hash: UInt32) {
        let link = storage.link(at: index)
        let epoch = adaptive.sketch.epoch
        if link.pointee.isSaturated, storage.saturationEpoch == epoch { return }
        guard !adaptive.sketch.increment(hash) else { return }
        // Nothing was added, so no halving ran: `epoch` is still the sketch's.
        if storage.saturationEpoch != epoch { storage.resetSaturationMarks(toEpoch: epoch) }
        link.pointee.isSaturated = true
    }

    /// After a value was stored at `index`: counts the use, and when the window is
    /// over its share, moves its oldest entries to the main space, each admitted
    /// only if the sketch counts it more often than the main space's victim (the
    /// loser is evicted). A replaced value counts as a use and keeps its place.
    @inlinable
    func admitAdaptively(at index: Int32, hash unseeded: UInt32, replaced: Bool, into removals: inout Removals) {
        guard policyCountsUses else { return }
        let hash = adaptive.hash.seeded(unseeded)
        if replaced {
            recordAdaptiveUse(at: index, hash: hash)
            return
        }
        adaptive.ensureSketchCapacity(forEntries: storage.count)
        adaptive.sketch.increment(hash)
        var budget = Self.burstSize
        while budget > 0, adaptive.windowIsOver(storage.windowSize),
              let candidate = storage.tail(of: .window) {
            budget -= 1
            let main = storage.count - storage.windowSize.count
            guard let reason = adaptive.mainLacksRoom(SegmentSize(count: main), total: storage.totalCost) else {
                storage.move(candidate, to: .probation)
                continue
            }
            guard let victim = storage.tail(of: .probation) ?? storage.tail(of: .protected) else {
                evict(at: candidate, reason: reason, into: &removals)
                continue
            }
            if frequency(at: candidate) > frequency(at: victim) {
                evict(at: victim, reason: reason, into: &removals)
                storage.move(candidate, to: .probation)
            } else {
                evict(at: candidate, reason: reason, into: &removals)
            }
        }
        adaptive.record(hit: false, entries: storage.count)
    }

    /// The sketch's estimate for the entry at `index`.
    @inlinable
    func frequency(at index: Int32) -> UInt8 {
        let key = storage.slot(at: index).pointee.key.unsafelyUnwrapped
        return adaptive.frequency(of: key)
    }

    /// The entry a limit evicts next: probation's oldest, then protected's, then the window's.
    @inlinable
    func nextAdaptiveVictim() -> Int32? {
        storage.tail(of: .probation) ?? storage.tail(of: .protected) ?? storage.tail(of: .window)
    }
}

extension MemoryCache {
    /// The live entries whose link claims saturated counters (in the current epoch)
    /// that the sketch does not count at the maximum; empty when the marks are sound.
    /// Called with the lock held (tests).
    func saturationMarkViolations() -> [Int32] {
        guard isAdaptive, storage.saturationEpoch == adaptive.sketch.epoch else { return [] }
        return (0..<storage.initializedCount).filter { index in
            storage.isLive(index) && storage.link(at: index).pointee.isSaturated
                && frequency(at: index) != UInt8(FrequencySketch.maximum)
        }
    }
}
