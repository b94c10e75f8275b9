extension MemoryCache {
    /// One entry that left the cache.
    @usableFromInline
    struct Removal {
        @usableFromInline let key: Key
        @usableFromInline let value: Value
        @usableFromInline let cost: Int64
        @usableFromInline let reason: EvictionReason

        @inlinable
        init(key: Key, value: Value, cost: Int64, reason: EvictionReason) {
            self.key = key
            self.value = value
            self.cost = cost
            self.reason = reason
        }
    }

    /// What an operation took out of the cache under the lock, to be reported
    /// and released after unlocking (a value's deinit, or a callback, might
    /// call back into the cache).
    @usableFromInline
    struct Removals {
        /// Entries to report or release on this thread; the first needs no allocation.
        @usableFromInline var first: Removal?
        @usableFromInline var rest: [Removal] = []
        /// A full batch of pending releases to hand to the background queue.
        @usableFromInline var releaseBatch: ContiguousArray<Value>?
        /// Batches of retired table nodes to free after their grace periods.
        @usableFromInline var retired: [RetiredNodes<Key, LRUStorage<Key, Value>.Entry>] = []

        @inlinable
        init() {}

        @inlinable
        var hasEntries: Bool { first != nil }

        @inlinable
        mutating func append(_ removal: Removal) {
            if first == nil { first = removal } else { rest.append(removal) }
        }

        func forEach(_ body: (Removal) -> Void) {
            if let first { body(first) }
            rest.forEach(body)
        }

        mutating func removeAll() {
            first = nil
            rest = []
        }
    }

    /// Counts an entry that left the cache and queues its value for release.
    /// Called with the lock held.
    @inlinable
    func discard(_ key: Key, _ value: Value, cost: Int64, reason: EvictionReason, into removals: inout Removals) {
        counters.recordEviction(reason)
        if onEviction == nil && releasesValuesInBackground {
            queueRelease(value, cost: cost)
        } else {
            removals.append(Removal(key: key, value: value, cost: cost, reason: reason))
        }
    }

    /// Adds a value to the pending releases. Called with the lock held.
    @inlinable
    func queueRelease(_ value: Value, cost: Int64) {
        pendingReleases.append(value)
        pendingCost = pendingCost.addingSaturated(cost)
    }

    /// Evicts the policy's next victim (under `.lru` the least recently used entry).
    /// Called with the lock held.
    @inlinable
    func evictNext(reason: EvictionReason, into removals: inout Removals) {
        // Under `.lru` the one list is the window's.
        guard let index = isAdaptive ? nextAdaptiveVictim() : storage.tail(of: .window) else { return }
        evict(at: index, reason: reason, into: &removals)
    }

    /// Evicts the entry at `index`.
    @inlinable
    func evict(at index: Int32, reason: EvictionReason, into removals: inout Removals) {
        let entry = storage.remove(at: index)
        discard(entry.key, entry.value, cost: entry.cost, reason: reason, into: &removals)
    }

    /// Takes a full batch of pending releases, if there is one. Called with the lock held,
    /// once per operation.
    @inlinable
    func takeFullReleaseBatch(into removals: inout Removals) {
        if pendingReleases.count >= limits.releaseBatchCount || pendingCost >= limits.releaseBatchCost,
           !pendingReleases.isEmpty {
            removals.releaseBatch = takePendingReleases()
        }
        if !storage.fullRetired.isEmpty {
            swap(&removals.retired, &storage.fullRetired)
        }
    }

    /// Empties the pending releases. Called with the lock held.
    @usableFromInline
    func takePendingReleases() -> ContiguousArray<Value> {
        var batch = ContiguousArray<Value>()
        batch.reserveCapacity(limits.releaseBatchCount)
        swap(&batch, &pendingReleases)
        pendingCost = 0
        return batch
    }

    /// Hands released values to the background and reports removed entries.
    /// Called after unlocking.
    @inlinable
    func complete(_ removals: consuming Removals) {
        if let batch = removals.releaseBatch.take() {
            releaser.release(consume batch)
        }
        var retired: [RetiredNodes<Key, LRUStorage<Key, Value>.Entry>] = []
        swap(&retired, &removals.retired)
        if removals.hasEntries {
            reportAndRelease(consume removals)
        } else {
            _ = consume removals
        }
        // After the removals' references are dropped, so that the nodes hold the last.
        free(all: &retired)
    }

    /// Calls `onEviction` for each entry, then releases their values, in the
    /// background if so configured. Called after unlocking.
    @usableFromInline
    func reportAndRelease(_ removals: consuming Removals) {
        if let onEviction {
            removals.forEach { onEviction($0.key, $0.value, $0.reason) }
        }
        guard releasesValuesInBackground else { return }
        mutex.lock()
        removals.forEach { queueRelease($0.value, cost: $0.cost) }
        var batchOnly = Removals()
        takeFullReleaseBatch(into: &batchOnly)
        mutex.unlock()
        // Drop this thread's references before the batch can reach the queue,
        // so the queue always holds the last one.
        removals.removeAll()
        if let batch = batchOnly.releaseBatch.take() {
            releaser.release(consume batch)
        }
    }
}
