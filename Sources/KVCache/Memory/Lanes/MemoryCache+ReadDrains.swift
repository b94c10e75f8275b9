import CProcessor

// Draining the read lanes' buffers into the adaptive policy: by a reader whose buffer
// filled (under a try-lock of the cache's lock), by the holder of the cache's lock for
// its own lane, or for every lane (tests).
extension MemoryCache {
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
    /// policy's decisions. Other lanes' reads wait for their own drains. Called with the
    /// cache's lock held.
    @inlinable
    func replayPendingReads() {
        guard isAdaptive else { return }
        drainReads(ofLane: storage.currentLaneIndex)
    }

    /// Replays the reads in lane `lane`'s buffers of the stripes it marked, in the order
    /// the lane recorded them: a duel of two keys in different stripes is settled by
    /// whichever was used first, not by whichever stripe comes first. Called with the
    /// cache's lock held.
    @inlinable
    func drainReads(ofLane lane: Int) {
        let header = storage.laneHeader(lane)
        var pending = header.takePendingStripes()
        guard pending != 0 else { return }
        let order = storage.lanes.orderingSpace()
        var count = 0
        while pending != 0 {
            let part = storage.lane(lane, stripe: pending.trailingZeroBitCount)
            pending &= pending &- 1
            part.lock()
            count &+= part.takeReads(into: order.reads + count, stamps: order.stamps + count)
            part.unlock()
        }
        // A buffer's worth at a time: the replay's prefetches for more would evict each other.
        let ordered = order.order(count: count, next: header.nextStamp)
        for start in stride(from: 0, to: count, by: LaneStripe.bufferCapacity) {
            replay(UnsafeBufferPointer(rebasing: ordered[start..<Swift.min(start &+ LaneStripe.bufferCapacity, count)]))
        }
    }

    /// Drains every lane's read buffers (tests, and operations that want the policy to
    /// see every read so far). Called with the cache's lock held.
    @usableFromInline
    func drainAllReads() {
        guard isAdaptive else { return }
        storage.lanes.forEachUsedLane { drainReads(ofLane: $0) }
    }

    /// Tells the policy about reads that a lane recorded, oldest first. A slot freed or
    /// reused since its read was recorded is skipped or credited to its new entry: the
    /// policy's precision, never a value, is at stake. Called with the cache's lock.
    @inlinable
    func replay(_ reads: UnsafeBufferPointer<UInt64>) {
        // Starts loading the lines the replay writes (each entry's link, which holds
        // its segment and cost, then its neighbours' links and, unless the link says
        // its counters are saturated, its sketch block) for all the reads before it
        // uses one: the loads overlap, where the replay's own would wait one cache
        // miss after another. Prefetches, not loads, so that the processor need not
        // wait for them to retire.
        let policyHash = adaptive.hash
        for read in reads {
            let index = Self.slot(ofRecordedUse: read)
            guard index < storage.initializedCount else { continue }
            kvcache_prefetch(storage.link(at: index))
        }
        let marksHold = storage.saturationEpoch == adaptive.sketch.epoch
        for read in reads {
            let index = Self.slot(ofRecordedUse: read)
            guard index < storage.initializedCount else { continue }
            let link = storage.link(at: index).pointee
            if link.previous >= 0 { kvcache_prefetch(storage.link(at: link.previous)) }
            if link.next >= 0 { kvcache_prefetch(storage.link(at: link.next)) }
            if !(marksHold && link.isSaturated) {
                kvcache_prefetch(adaptive.sketch.block(policyHash.seeded(UInt32(truncatingIfNeeded: read >> 32))))
            }
        }
        for read in reads {
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

    /// The slot of a use recorded in a read buffer (`LaneStripe.buffer`).
    @inlinable
    static func slot(ofRecordedUse use: UInt64) -> Int32 {
        Int32(bitPattern: UInt32(truncatingIfNeeded: use) & ~LaneStripe.writeMark)
    }
}
