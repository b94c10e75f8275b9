import Testing
@testable import kvcache_bench

/// Each reference policy on short sequences worked out by hand: which requests hit.
@Suite struct HitRatioPolicyTests {
    /// The hits (true) and misses of a fresh `P` of `capacity` entries on `keys`.
    func outcomes<P: Policy>(_ type: P.Type, capacity: Int, _ keys: [Int]) -> [Bool] {
        var policy = P(capacity: capacity)
        return keys.map { policy.access($0) }
    }

    /// "hmm" → [true, false, false].
    func pattern(_ text: String) -> [Bool] { text.map { $0 == "h" } }

    @Test func lruEvictsTheLeastRecentlyUsedKey() {
        // 4 evicts 2 (1 was used after it), 2 then evicts 3, 5 evicts 4.
        #expect(outcomes(LRUPolicy.self, capacity: 3, [1, 2, 3, 1, 4, 2, 1, 5, 1]) == pattern("mmmhmmhmh"))
        #expect(LRUPolicy.hits(replaying: [1, 2, 2, 1, 3, 2], capacity: 2) == 2)
    }

    @Test func clockGivesReferencedKeysASecondChance() {
        // 3 finds 1 and 2 referenced: both go round with their bits cleared, then 1 (the
        // oldest again) is evicted and 2 stays, where LRU would have evicted 2.
        #expect(outcomes(ClockPolicy.self, capacity: 2, [1, 2, 2, 1, 3, 2]) == pattern("mmhhmh"))
        #expect(outcomes(LRUPolicy.self, capacity: 2, [1, 2, 2, 1, 3, 2]) == pattern("mmhhmm"))
        // A bit the sweep cleared stays clear: 1, gone round once, is evicted by the next miss.
        #expect(outcomes(ClockPolicy.self, capacity: 2, [1, 2, 1, 3, 4, 3, 1]) == pattern("mmhmmhm"))
    }

    @Test func sieveKeepsVisitedKeysInPlaceAndItsHandWhereItStopped() {
        // 4: the hand starts at the tail (1, not visited) and evicts it, resting on 2.
        // 1: the hand clears 2's bit, moves on and evicts 3, resting on 4.
        // 5: evicts 4 (not visited), resting on 1. 2 and 1 are still there.
        #expect(outcomes(SievePolicy.self, capacity: 3, [1, 2, 3, 2, 4, 1, 5, 2, 1]) == pattern("mmmhmmmhh"))
        #expect(outcomes(LRUPolicy.self, capacity: 3, [1, 2, 3, 2, 4, 1, 5, 2, 1]) == pattern("mmmhmmmmh"))
        // The hand wraps from the head back to the tail.
        #expect(outcomes(SievePolicy.self, capacity: 2, [1, 2, 1, 2, 3, 4, 3]) == pattern("mmhhmmh"))
    }

    @Test func s3fifoFiltersOneHitWondersThroughTheSmallQueueAndItsGhosts() {
        // 10 entries: the small FIFO's share is 1, the main FIFO 9, the ghost FIFO 9.
        var keys = Array(1...10)  // all into the small FIFO (the cache is not full yet)
        keys += Array(1...5) + Array(1...5)  // 1-5 hit twice: frequency 2
        keys += [11]  // full: 1-5 move to main (frequency > 1), 6 leaves for the ghosts
        keys += [6]  // a ghost: back into main, evicting 7 from small into the ghosts
        keys += [1, 9, 7, 8, 6]  // main hit; small hit; ghost (miss, into main, 8 to the ghosts); ghost; main hit
        var expected = pattern(String(repeating: "m", count: 10) + String(repeating: "h", count: 10))
        expected += pattern("mm" + "hhmmh")
        #expect(outcomes(S3FIFOPolicy.self, capacity: 10, keys) == expected)
    }

    @Test func s3fifoReinsertsMainKeysWhileTheirFrequencyLasts() {
        // 10 entries: 1-10 hit twice in small; 11 moves them all to main (frequency reset to 0),
        // which overflows and evicts 1. In main 2 is hit twice, 3 once. 12 pushes 11 to the
        // ghosts; 11 comes back into main and pushes 12 to the ghosts, leaving small empty.
        // 13 then evicts from main: 2 and 3 go round (frequency 2 → 1, 1 → 0), 4 is evicted.
        // 12 comes back from the ghosts (13 leaves small) and 14 evicts 5 from main.
        let keys = Array(1...10) + Array(1...10) + Array(1...10) + [11, 2, 2, 3, 12, 11, 13, 12, 14, 2, 3, 4, 5]
        let expected = String(repeating: "m", count: 10) + String(repeating: "h", count: 20)
            + "m" + "hhh" + "mmmmm" + "hh" + "mm"
        #expect(outcomes(S3FIFOPolicy.self, capacity: 10, keys) == pattern(expected))
    }

    @Test func arcAdaptsItsTargetOnGhostHits() {
        // Worked through the paper's cases with c = 2 (p starts at 0):
        // 1 2 (T1), 1 hits (T2), 3: REPLACE moves 2 to B1; 4: Case IV-A drops 2 from B1 and moves
        // 3 to B1; 1 hits in T2; 3 in B1: p = 1, 1 goes to B2; 1 in B2: p = 0, 4 goes to B1;
        // 4 in B1: p = 1, 3 goes to B2; 1 hits in T2.
        let keys = [1, 2, 1, 3, 4, 1, 3, 1, 4, 1]
        #expect(outcomes(ARCPolicy.self, capacity: 2, keys) == pattern("mmhmmhmmmh"))
        #expect(outcomes(LRUPolicy.self, capacity: 2, keys) == pattern("mmhmmmmhmh"))
    }

    @Test func arcKeepsFrequentKeysThroughAScan() {
        // 2 keys used twice, then a scan of 20 once-used keys: T2 keeps them, LRU does not.
        let keys = [1, 2, 1, 2] + Array(100..<120) + [1, 2]
        #expect(outcomes(ARCPolicy.self, capacity: 4, keys).suffix(2) == [true, true])
        #expect(outcomes(LRUPolicy.self, capacity: 4, keys).suffix(2) == [false, false])
    }

    @Test func twoQueueAdmitsToAmOnlyFromTheGhosts() {
        // 4 entries: A1in's share is 1, A1out holds 2 ghosts.
        // 5 pushes 1 to A1out; 1 and 2 come back from A1out into Am (pushing 2 and 3 out
        // of A1in); 6 pushes 4 out; 1 hits in Am, 5 in A1in; 3 and 4 come back from A1out
        // (A1in is at its share, so Am's least recent keys 2 and 1 are dropped, not
        // remembered); 2 is new again; 6 is still in A1in.
        let keys = [1, 2, 3, 4, 5, 1, 2, 6, 1, 5, 3, 4, 2, 6]
        #expect(outcomes(TwoQueuePolicy.self, capacity: 4, keys) == pattern("mmmmmmmmhhmmmh"))
    }

    @Test func wTinyLFUAdmitsByFrequency() {
        // 3 entries: window 1, probation 1 and protected 1 (80 % of 2, rounded down).
        // 3 enters probation; 4's candidate 3 (1 access) ties with the victim 2 and is
        // dropped; 2 is promoted (1 drops back to probation); 3 comes back, and its
        // candidate 4 loses to 1 (4 accesses); 4 is a miss again.
        let keys = [1, 1, 2, 3, 1, 4, 1, 2, 3, 4]
        #expect(outcomes(WTinyLFUPolicy.self, capacity: 3, keys) == pattern("mhmmhmhhmm"))
    }

    @Test func wTinyLFUKeepsHotKeysThroughAScan() {
        let hot = Array(0..<50)
        let keys = hot + hot + hot + hot + Array(1_000..<3_000) + hot
        var policy = WTinyLFUPolicy(capacity: 100)
        var lru = LRUPolicy(capacity: 100)
        var lastPass = (tinyLFU: 0, lru: 0)
        for (index, key) in keys.enumerated() {
            let hit = policy.access(key), lruHit = lru.access(key)
            if index >= keys.count - hot.count {
                if hit { lastPass.tinyLFU += 1 }
                if lruHit { lastPass.lru += 1 }
            }
        }
        // Keys 0-48 were promoted to protected and a scan never evicts from there. Key 49 was
        // still in the window when the scan began, so it waits in probation, where its count,
        // halved by the sketch's aging, can lose to a scan key whose counters collide.
        #expect(lastPass.tinyLFU >= 49)
        #expect(lastPass.lru == 0)
    }

    @Test func theSketchCountsAndAges() {
        var sketch = FrequencySketch(capacity: 10)  // ages every 100 additions
        for _ in 0..<20 { sketch.increment(7) }
        #expect(sketch.frequency(7) == FrequencySketch.maximum)
        #expect(sketch.frequency(8) == 0)
        for key in 100..<180 { sketch.increment(key) }  // the 100th addition halves every counter
        #expect(sketch.frequency(7) == 7)
        #expect(sketch.additions == 50)
    }

    @Test func everyPolicyHoldsAtMostItsCapacity() {
        // 50 distinct keys, then the same 50 again: only the keys cached when the second pass
        // starts can hit in it, so a policy that holds at most 10 keys hits at most 10 times.
        let keys = Array(0..<50) + Array(0..<50)
        func hits<P: Policy>(_ type: P.Type) -> (String, Int) { (P.name, P.hits(replaying: keys, capacity: 10)) }
        for (name, count) in [hits(LRUPolicy.self), hits(ClockPolicy.self), hits(SievePolicy.self),
                              hits(S3FIFOPolicy.self), hits(ARCPolicy.self), hits(TwoQueuePolicy.self),
                              hits(WTinyLFUPolicy.self)] {
            #expect(count <= 10, "\(name): \(count) hits with 10 entries")
        }
    }
}
