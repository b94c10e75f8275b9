import Testing
@testable import kvcache_bench

@Suite struct SampleSetTests {
    /// Each run's figure is divided by the floor's of the same run, not by the floor's median:
    /// a run where the machine was twice as slow for both gives the same ratio.
    @Test func ratiosToTheFloorPairRunsInOrder() {
        var samples = SampleSet()
        for (floor, other) in [(100.0, 150.0), (200.0, 260.0), (100.0, 90.0)] {
            samples.record("floor", isFloor: true, perOperation: floor, operations: 1)
            samples.record("other", isFloor: false, perOperation: other, operations: 1)
        }
        #expect(samples.ratiosToFloorPerRun(of: "other") == [1.5, 1.3, 0.9])
        #expect(samples.ratiosToFloorPerRun(of: "floor") == [1, 1, 1])
        #expect(samples.ratiosToFloorPerRun(of: "absent").isEmpty)
    }

    @Test func withoutAFloorThereAreNoRatios() {
        var samples = SampleSet()
        samples.record("other", isFloor: false, perOperation: 1, operations: 1)
        #expect(samples.ratiosToFloorPerRun(of: "other").isEmpty)
    }
}
