import Foundation
import KVCache
import Synchronization

/// KVCache's MemoryCache (adaptive policy) replayed by several threads at once: each
/// claims the next `chunk` consecutive requests from one cursor (`SharedPositions`)
/// and replays it in order, so the requests run close to the trace's order while
/// reads record on several lanes and some are dropped. Against the same replay on one
/// thread it shows what the policy loses by sampling reads.
///
/// Threads running at once interleave their chunks, which reorders the trace a little,
/// and on a trace whose hits hang on the order of a scan (a loop a little larger than the
/// cache) that alone moves the hits by points. So the order the requests ran in is logged
/// too, and replayed on one thread: the gap to that replay is what concurrency costs the
/// policy, apart from the order.
enum ConcurrentReplay {
    /// Requests a thread claims at a time: small, so that the threads' interleaving
    /// reorders the trace little (the figure is about the policy, not the order).
    static let chunk = 16

    struct Outcome {
        var hits: Int
        /// Hits the policy did not see (`MemoryCache.Statistics.droppedReads`).
        var droppedReads: Int
        /// One thread's hits replaying the requests in the order the threads ran them.
        var sameOrderHits: Int
        /// One thread's hits on that order with `swapShare` of neighbouring requests
        /// swapped, once per seed of `swapSeeds`: how far order alone moves the policy.
        var swappedOrderHits: [Int]
        /// The same with `delayShare` of the requests run up to `delaySpan` places late, once
        /// per seed of `swapSeeds`.
        var delayedOrderHits: [Int]
    }

    /// The share of neighbouring requests swapped, and the seeds: a reordering of the kind
    /// threads make, requests a place apart, and rarer.
    static let swapShare = 0.001
    static let swapSeeds: [UInt64] = [1, 2, 3]

    /// The share of requests run late, and how late at most: as a thread descheduled between
    /// taking its ticket and running its request runs it, while the others run theirs.
    static let delayShare = 0.001
    static let delaySpan = 50

    /// `keys` with each request moved 1 to `span` places later at the rate `share` (it then
    /// runs just after the request that was at its new place); the others keep their order.
    static func delaying(_ keys: [Int], share: Double, span: Int, seed: UInt64) -> [Int] {
        var random = SplitMix64(seed: seed)
        // (place, 1 for a request moved after that place's request, its own index): sorted, the new order.
        let places = keys.indices.map { index -> (Int, Int, Int) in
            guard random.nextUnit() < share else { return (index, 0, index) }
            return (index + 1 + Int((random.nextUnit() * Double(max(1, span) - 1)).rounded()), 1, index)
        }
        return places.sorted { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }.map { keys[$0.2] }
    }

    /// `keys` with each request swapped with the next one at the rate `share` (a swapped
    /// pair is not swapped again), by a generator seeded with `seed`.
    static func swappingNeighbours(_ keys: [Int], share: Double, seed: UInt64) -> [Int] {
        var keys = keys
        var random = SplitMix64(seed: seed)
        var index = 0
        while index + 1 < keys.count {
            if random.nextUnit() < share {
                keys.swapAt(index, index + 1)
                index += 2
            } else {
                index += 1
            }
        }
        return keys
    }

    /// `keys` replayed by `threads` threads at once, then in their order by one thread, and
    /// (with `perturbing`) that order changed by swaps and late requests. With
    /// `readsTakeTheCacheLock`, each cache's reads record their hits at once under its lock.
    static func replay(_ keys: [Int], capacity: Int, threads: Int, readsTakeTheCacheLock: Bool = false,
                       perturbing: Bool = true) -> Outcome {
        let replay = KVCacheAdaptiveReplay(capacity: capacity, readsTakeTheCacheLock: readsTakeTheCacheLock)
        let positions = SharedPositions(count: keys.count, chunk: chunk)
        let order = OrderLog(count: keys.count)
        let outcome = ParallelRunner.run(threads: threads) { _, _ in
            var hits = 0
            while let chunk = positions.claim() {
                for position in chunk {
                    order.append(position)
                    if replay.access(keys[position]) { hits &+= 1 }
                }
            }
            return hits
        }
        let sameOrder = (0..<keys.count).map { keys[order[$0]] }
        if let folder = ProcessInfo.processInfo.environment["KVCACHE_BENCH_ORDER_DIR"], !readsTakeTheCacheLock {
            // For the Python model (`Scripts/policy-sim`): a key a line, as the threads ran them.
            let path = "\(folder)/order-\(keys.count)-\(capacity).txt"
            if (try? sameOrder.map(String.init).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)) == nil {
                print("hit ratio: could not write \(path)")
            }
        }
        let hits = { (keys: [Int]) in
            KVCacheAdaptiveReplay.hits(replaying: keys, capacity: capacity, readsTakeTheCacheLock: readsTakeTheCacheLock)
        }
        return Outcome(hits: outcome.total, droppedReads: replay.cache.statistics.droppedReads,
                       sameOrderHits: hits(sameOrder),
                       swappedOrderHits: perturbing ? swapSeeds.map { seed in
                           hits(swappingNeighbours(sameOrder, share: swapShare, seed: seed))
                       } : [],
                       delayedOrderHits: perturbing ? swapSeeds.map { seed in
                           hits(delaying(sameOrder, share: delayShare, span: delaySpan, seed: seed))
                       } : [])
    }
}

/// The positions of a trace in the order threads took them, one ticket each: the order
/// they started in, which two threads may then run a request or two apart.
/// Unchecked: each ticket is one thread's slot, read only after the threads have joined.
final class OrderLog: @unchecked Sendable {
    private let positions: UnsafeMutablePointer<Int>
    private let count: Int
    private let next = Atomic<Int>(0)

    init(count: Int) {
        self.count = count
        positions = .allocate(capacity: max(1, count))
    }

    deinit { positions.deallocate() }

    func append(_ position: Int) {
        let ticket = next.add(1, ordering: .relaxed).oldValue
        precondition(ticket < count)
        positions[ticket] = position
    }

    /// The position taken `index`th; read after the threads have joined.
    subscript(index: Int) -> Int { positions[index] }
}
