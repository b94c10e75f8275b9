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

    @Test func delayingMovesAFewRequestsAFewPlacesLater() {
        let keys = Array(0..<10_000)
        #expect(ConcurrentReplay.delaying(keys, share: 0, span: 50, seed: 1) == keys)
        // Each request one place late: each runs after its successor's place, so the order holds.
        #expect(ConcurrentReplay.delaying([0, 1, 2], share: 1, span: 1, seed: 1) == [0, 1, 2])
        let delayed = ConcurrentReplay.delaying(keys, share: 0.01, span: 50, seed: 7)
        #expect(delayed.sorted() == keys)
        #expect(delayed != keys)
        // A late request runs at most `span` places later, plus the late requests that land
        // before it; a request moves earlier only by the late ones that pass it (about 1 % of
        // 10,000 are late: well under 200).
        #expect(zip(delayed.indices, delayed).allSatisfy { index, key in index - key <= 50 + 200 && key - index <= 200 })
        #expect(zip(delayed.indices, delayed).contains { index, key in index - key > 1 })
        #expect(ConcurrentReplay.delaying(keys, share: 0.01, span: 50, seed: 7) == delayed)
        #expect(ConcurrentReplay.delaying(keys, share: 0.01, span: 50, seed: 8) != delayed)
    }
}
