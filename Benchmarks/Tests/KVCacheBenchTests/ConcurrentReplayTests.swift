import Testing
@testable import kvcache_bench

@Suite struct ConcurrentReplayTests {
    @Test func swappingNeighboursKeepsEveryRequestOnce() {
        let keys = Array(0..<1_000)
        #expect(ConcurrentReplay.swappingNeighbours(keys, share: 0, seed: 1) == keys)
        // Every pair swapped once, never a request twice.
        #expect(ConcurrentReplay.swappingNeighbours([0, 1, 2, 3, 4], share: 1, seed: 1) == [1, 0, 3, 2, 4])
        let swapped = ConcurrentReplay.swappingNeighbours(keys, share: 0.1, seed: 7)
        #expect(swapped.sorted() == keys)
        #expect(swapped != keys)
        #expect(zip(swapped, keys).allSatisfy { abs($0 - $1) <= 1 })
        // The same seed, the same order: the figure repeats.
        #expect(ConcurrentReplay.swappingNeighbours(keys, share: 0.1, seed: 7) == swapped)
        #expect(ConcurrentReplay.swappingNeighbours(keys, share: 0.1, seed: 8) != swapped)
    }
}
