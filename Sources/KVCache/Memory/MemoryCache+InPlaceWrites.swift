import CProcessor

// Sets that replace a live entry's value in place, holding only the key's stripe's
// locks: the common write of a cache whose keys are refreshed. Everything the policy
// needs is recorded in the writer's read lane, as a read is, and applied by its drain.
extension MemoryCache {
    /// Replaces the value of `key`'s entry if it has one whose cost is `cost`, holding
    /// only the key's stripe's lock in every lane (readers of the stripe on other lanes
    /// wait that long; the cache's lock is not taken). The use is recorded in the
    /// calling thread's read lane and reaches the policy with its reads; the old value
    /// is reported and released as a replaced one. Returns false, having changed
    /// nothing, when the entry is missing or costs otherwise, or when reads take the
    /// cache's lock (some entry can expire, or ages are tracked): the caller then takes
    /// the cache's lock. `hash` is the key's unseeded policy hash. Called without any
    /// lock, only when `replacesInPlace`.
    @inlinable
    func replaceInPlace(_ value: Value, forKey key: Key, hash: UInt32, cost: Int64) -> Bool {
        typealias Entry = LRUStorage<Key, Value>.Entry
        let smallCost = Entry.smallCost(cost)
        guard smallCost != Entry.largeCost else { return false }
        let stripe = storage.stripeIndex(forHash: hash)
        let laneIndex = storage.currentLaneIndex
        let part = storage.lane(laneIndex, stripe: stripe)
        // Looked up first under this lane's lock alone: a set of a new key (most sets of a
        // cache that evicts) then costs one lock, not one per lane, before the cache's lock.
        part.lock()
        let isStored = part.readsSkipCacheLock && storage.withStripe(at: stripe) { tableStripe in
            tableStripe.table.index(forKey: TableKey(key)).map { tableStripe.table.values[$0].cost == smallCost } ?? false
        }
        part.unlock()
        guard isStored else { return false }
        var oldValue: Value? = nil
        var releaseBatch: ContiguousArray<Entry>? = nil
        var drains = false
        var didReplace = false
        let start = measuresSerialSections ? kvcache_monotonic_nanoseconds() : 0
        storage.lanes.lockStripe(stripe)
        if part.readsSkipCacheLock {
            storage.withStripe(at: stripe) { tableStripe in
                guard let position = tableStripe.table.index(forKey: TableKey(key)),
                      tableStripe.table.values[position].cost == smallCost else { return }
                didReplace = true
                var replaced = value
                swap(&tableStripe.table.values[position].value, &replaced)
                let buffered = part.record(
                    tableStripe.table.values[position].index, hash: hash, mark: LaneStripe.writeMark)
                if buffered == 1 { storage.laneHeader(laneIndex).markPending(stripe: stripe) }
                drains = buffered == LaneStripe.bufferCapacity
                    || buffered == 0 && part.dropped & (Self.drainRetryInterval &- 1) == 0
                part.replacements &+= 1
                if onEviction == nil && releasesValuesInBackground {
                    let index = tableStripe.table.values[position].index
                    tableStripe.released.append(Entry(index: index, cost: cost, value: replaced))
                    tableStripe.releasedCost &+= cost
                    if tableStripe.releaseBatchIsFull { releaseBatch = tableStripe.takeReleased() }
                } else {
                    oldValue = replaced
                }
            }
        }
        if measuresSerialSections {
            part.writeNanoseconds &+= Int(truncatingIfNeeded: kvcache_monotonic_nanoseconds() &- start)
        }
        storage.lanes.unlockStripe(stripe)
        guard didReplace else { return false }
        if let releaseBatch { releaser.release(consume releaseBatch) }
        if let oldValue, let onEviction { onEviction(key, oldValue, .replaced) }
        if drains { drainReadsIfIdle(lane: laneIndex) }
        return true
    }
}
