import CProcessor
import Synchronization

// The adaptive policy's (W-TinyLFU's) steps. They run with the lock held, and only
// when `isAdaptive`.
extension MemoryCache {
    /// Records a read hit of the entry at `index`, whose key has the policy hash `hash`:
    /// counts the use, moves the entry up within the segments, and tells what moves the window.
    @inlinable
    func recordAdaptiveHit(at index: Int32, hash: UInt32) {
        // Without a limit only trims evict, in recency order: counting would serve nothing.
        guard policyCountsUses else {
            storage.moveToFront(index, in: storage.segment(at: index))
            return
        }
        recordAdaptiveUse(at: index, hash: hash)
        adaptive.duels.noteUse(hash)
        adaptive.record(hit: true, hash: hash, entries: storage.count)
    }

    /// Records a value replaced in place (`replaceInPlace`) at `index`: a use, as a
    /// replacement under the cache's lock counts one, but not a request for what moves the window.
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
    /// only if the sketch counts it at least the admission lead (`AdmissionDuels`) more
    /// uses than the main space's victim (the loser is evicted). A replaced value counts
    /// as a use and keeps its place.
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
        if adaptive.duels.hasDuel(hash) {
            // The duel's other key may have been read first on another lane, its read still
            // in that lane's buffer: without those reads, a duel would go to the key that
            // misses (the one evicted) whenever threads read at once.
            drainAllReads()
            adaptive.duels.noteUse(hash)
        }
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
            let candidateHash = policyHash(at: candidate), victimHash = policyHash(at: victim)
            let candidateUses = adaptive.sketch.frequency(candidateHash)
            let victimUses = adaptive.sketch.frequency(victimHash)
            // A lead of `margin` admits the candidate and one more does not: the duel finds
            // out which would hit.
            if candidateUses > victimUses {
                adaptive.duels.open(candidate: candidateHash, victim: victimHash, margin: candidateUses &- victimUses)
            }
            if candidateUses >= victimUses &+ adaptive.duels.lead {
                evict(at: victim, reason: reason, into: &removals)
                storage.move(candidate, to: .probation)
            } else {
                evict(at: candidate, reason: reason, into: &removals)
                // Under lead 1 (recency pays), a victim that holds goes to its segment's recent
                // end: a key counted often long ago would otherwise face, and turn away, every
                // candidate that follows (a second chance, as CLOCK gives).
                if adaptive.duels.lead == 1 { storage.moveToFront(victim, in: storage.segment(at: victim)) }
            }
        }
        adaptive.record(hit: false, hash: hash, entries: storage.count)
    }

    /// The policy hash of the entry at `index`'s key.
    @inlinable
    func policyHash(at index: Int32) -> UInt32 {
        adaptive.hash.hash(storage.slot(at: index).pointee.key.unsafelyUnwrapped)
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
