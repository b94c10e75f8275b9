import KVCache

/// KVCache's MemoryCache (adaptive policy) replayed by several threads at once: each
/// claims the next `chunk` consecutive requests from one cursor (`SharedPositions`)
/// and replays it in order, so the requests run close to the trace's order while
/// reads record on several lanes and some are dropped. Against the same replay on one
/// thread it shows what the policy loses by sampling reads.
enum ConcurrentReplay {
    /// Requests a thread claims at a time: small, so that the threads' interleaving
    /// reorders the trace little (the figure is about the policy, not the order).
    static let chunk = 16

    struct Outcome {
        var hits: Int
        /// Hits the policy did not see (`MemoryCache.Statistics.droppedReads`).
        var droppedReads: Int
    }

    static func replay(_ keys: [Int], capacity: Int, threads: Int) -> Outcome {
        // Only a negative count limit is refused, and capacities here are positive.
        let cache = try! MemoryCache<Int, Int>(configuration: .init(
            countLimit: max(1, capacity), autoTrimInterval: nil, releasesValuesInBackground: false))
        let positions = SharedPositions(count: keys.count, chunk: chunk)
        let outcome = ParallelRunner.run(threads: threads) { _, _ in
            var hits = 0
            while let chunk = positions.claim() {
                for position in chunk {
                    let key = keys[position]
                    if cache.value(forKey: key) != nil {
                        hits &+= 1
                    } else {
                        cache.setValue(key, forKey: key)
                    }
                }
            }
            return hits
        }
        return Outcome(hits: outcome.total, droppedReads: cache.statistics.droppedReads)
    }
}
