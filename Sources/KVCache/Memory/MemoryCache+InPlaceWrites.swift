import CProcessor
import Synchronization

// Sets that replace a live entry's value in place, holding only the key's stripe's
// locks: the common write of a cache whose keys are refreshed. Everything the policy
// needs is recorded in the writer's read lane, as a read is, and applied by its drain.
extension MemoryCache {
    /// Replaces the value of `key`'s entry if it has one whose cost is `cost`, holding
    /// only the key's stripe's write lock (which readers never take; writers of other
    /// stripes take others) and, to record the use, the writer's own read lane's lock of
    /// the stripe. The use reaches the policy with the lane's reads; the old value's node
    /// is retired, freed after a grace period in a batch, and the value reported as a
    /// replaced one. Returns false, having changed nothing, when the entry is missing or
    /// costs otherwise, or when reads take the cache's lock (some entry can expire, or
    /// ages are tracked): the caller then takes the cache's lock. `hash` is the key's
    /// unseeded policy hash, `tableHash` its table hash (`LRUStorage.tableHash(of:)`). Called without any lock, only when `replacesInPlace`.
    @inlinable
    func replaceInPlace(_ value: Value, forKey key: Key, hash: UInt32, tableHash: Int, cost: Int64) -> Bool {
        typealias Entry = LRUStorage<Key, Value>.Entry
        let smallCost = Entry.smallCost(cost)
        guard smallCost != Entry.largeCost else { return false }
        let stripeIndex = storage.stripeIndex(forHash: hash)
        let laneIndex = storage.currentLaneIndex
        let part = storage.lane(laneIndex, stripe: stripeIndex)
        let start = measuresSerialSections ? kvcache_monotonic_nanoseconds() : 0
        let (replaced, retired, drains): (Entry?, RetiredNodes<Key, Entry>?, Bool) = storage.withStripe(at: stripeIndex) { stripe in
            stripe.prefetchBucket(forHash: tableHash)
            stripe.writeLock.lock()
            defer { stripe.writeLock.unlock() }
            // A set of a new key (most sets of a cache that evicts) leaves here, before
            // any lane's lock.
            let (found, previous, bucket) = stripe.position(ofKey: key, hash: tableHash)
            guard let found, found.pointee.entry.cost == smallCost else { return (nil, nil, false) }
            part.lock()
            guard part.readsSkipCacheLock else {
                part.unlock()
                return (nil, nil, false)
            }
            let old = found.pointee.entry
            stripe.replace(found, after: previous, in: bucket, with: Entry(index: old.index, cost: cost, value: value), cost: cost)
            let header = storage.laneHeader(laneIndex)
            let buffered = part.record(old.index, hash: hash, mark: LaneStripe.writeMark, header: header)
            if buffered == 1 { header.markPending(stripe: stripeIndex) }
            let drains = buffered == LaneStripe.bufferCapacity
                || buffered == 0 && part.dropped & (Self.drainRetryInterval &- 1) == 0
            part.replacements &+= 1
            if measuresSerialSections {
                part.writeNanoseconds &+= Int(truncatingIfNeeded: kvcache_monotonic_nanoseconds() &- start)
            }
            part.unlock()
            return (old, stripe.takeRetiredIfFull(stripe: stripeIndex), drains)
        }
        guard let replaced else { return false }
        if let onEviction { onEviction(key, replaced.value, .replaced) }
        // This thread's reference goes first, so that the background holds the last.
        _ = consume replaced
        if let retired { free(retired) }
        if drains { drainReadsIfIdle(lane: laneIndex) }
        return true
    }

    /// Frees retired table nodes, and with them the last references the table held to
    /// replaced and removed values, once no reader can be on them: in the background when
    /// values are released there. Called without any lock.
    @inlinable
    func free(_ retired: consuming RetiredNodes<Key, LRUStorage<Key, Value>.Entry>) {
        storage.lanes.synchronize(stripe: retired.stripe)
        if releasesValuesInBackground { releaser.release(retired) }
    }

    /// `free` for every batch in `retired`, which is left empty. Each batch leaves the array
    /// before it is freed: the releaser must hold its last reference. Called without any lock.
    @inlinable
    func free(all retired: inout [RetiredNodes<Key, LRUStorage<Key, Value>.Entry>]) {
        while let batch = retired.popLast() { free(batch) }
    }
}
