import Testing
@testable import KVCache

/// The table stripes' bucket arrays, as readers find them.
@Suite struct TableStripeTests {
    /// A reader prefetches its key's bucket before it holds a lane's lock, from the root
    /// and the mask hint: after the stripes grew, the hint points at the bucket a look-up
    /// under the lock reads, and the checks catch a mask that disagrees with its array.
    @Test func theBucketHintFollowsTheTableAsItGrows() throws {
        let cache: MemoryCache<String, Int> = try makeCache(.init(countLimit: 5_000, autoTrimInterval: nil))
        for number in 0..<5_000 { cache.setValue(number, forKey: "key \(number)") }
        cache.withLock {
            #expect(cache.storage.invariantViolations() == [])
            for stripe in cache.storage.stripes {
                let buckets = stripe.currentBuckets
                #expect(TableStripe<String, LRUStorage<String, Int>.Entry>.bucketCount(of: buckets) > 8)
                for hash in [0, 1, -1, 12_345, Int.max, Int.min] {
                    let bucket = TableStripe<String, LRUStorage<String, Int>.Entry>.bucket(hash, in: buckets)
                    #expect(stripe.bucketAddressHint(forHash: hash) == UInt(bitPattern: bucket))
                }
            }
            let stripe = cache.storage.stripes[0]
            let mask = stripe.bucketMask.load(ordering: .relaxed)
            stripe.bucketMask.store(mask / 2, ordering: .relaxed)
            #expect(cache.storage.invariantViolations().contains { $0.hasPrefix("table stripe 0: bucket mask") })
            stripe.bucketMask.store(mask, ordering: .relaxed)
        }
    }
}
