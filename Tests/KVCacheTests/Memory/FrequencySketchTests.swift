import Testing
@testable import KVCache

/// The adaptive policy's frequency sketch: saturating counters, halving, and its layout.
@Suite struct FrequencySketchTests {
    @Test(arguments: [0, 1, 100, 4_096, 100_000])
    func eachBlockIsOneCacheLine(capacity: Int) {
        // A block that straddles two lines costs a second cache miss per counted use.
        let sketch = FrequencySketch(capacity: capacity)
        #expect(Int(bitPattern: sketch.words) % (FrequencySketch.blockWords * 8) == 0)
    }

    @Test func countersSaturateAtFifteen() {
        var sketch = FrequencySketch(capacity: 1_000)
        for count in 1...20 {
            // An increment tells whether it changed anything: not once every counter is at 15.
            #expect(sketch.increment(42) == (count <= 15), "use \(count)")
            #expect(sketch.frequency(42) == UInt8(min(count, 15)), "after \(count) uses")
        }
        // Only uses that raised some counter count toward the sample.
        #expect(sketch.additions == 15)
        #expect(sketch.frequency(43) == 0)
    }

    @Test func aFullSampleHalvesEveryCounter() {
        var sketch = FrequencySketch(capacity: 1)
        #expect(sketch.sampleSize == 10)
        for _ in 1...9 { sketch.increment(7) }
        #expect(sketch.frequency(7) == 9)
        #expect(sketch.epoch == 0)
        sketch.increment(7)
        #expect(sketch.frequency(7) == 5)
        #expect(sketch.additions == 5)
        // Counters went down: whoever saw them saturated must look again.
        #expect(sketch.epoch == 1)
    }

    @Test func aGrownSketchTakesTheNextEpoch() {
        // Its counters start at 0: marks of saturation taken on the old one no longer hold.
        var policy = AdaptivePolicy<Int>(seed: 0, countLimit: .max, costLimit: 1_000)
        let epoch = policy.sketch.epoch
        policy.ensureSketchCapacity(forEntries: 100)
        #expect(policy.sketch.capacity >= 100)
        #expect(policy.sketch.epoch == epoch + 1)
    }
}
