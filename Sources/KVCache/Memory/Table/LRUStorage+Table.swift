// The striped table's side of the storage: which stripe and lane a key and a thread
// use, looking keys up, and the values that in-place sets replaced.
extension LRUStorage {
    /// What the table holds for a key.
    @usableFromInline
    struct Entry {
        @usableFromInline var index: Int32
        /// The entry's cost, or `largeCost` when it does not fit: a writer that holds only
        /// the stripe's locks replaces a value in place when its cost is unchanged (the
        /// slot's cost is the cache lock's). It fills padding next to `index`.
        @usableFromInline var cost: UInt32
        @usableFromInline var value: Value

        @inlinable
        init(index: Int32, cost: Int64, value: Value) {
            self.index = index
            self.cost = Self.smallCost(cost)
            self.value = value
        }

        @inlinable static var largeCost: UInt32 { .max }

        /// `cost` as an entry holds it.
        @inlinable
        static func smallCost(_ cost: Int64) -> UInt32 {
            cost >= 0 && cost < Int64(largeCost) ? UInt32(cost) : largeCost
        }
    }

    /// Lane `lane`'s part of stripe `stripe` (`lanes[lane:stripe:]`, without touching
    /// the `ReadLanes` object).
    @inlinable
    func lane(_ lane: Int, stripe: Int) -> LaneStripe {
        LaneStripe(memory: laneBase + lane &* laneStride + stripe &* laneStripeStride)
    }

    /// Lane `lane`'s header (`lanes.header(lane:)`, without touching the `ReadLanes` object).
    @inlinable
    func laneHeader(_ lane: Int) -> LaneHeader {
        LaneHeader(memory: laneBase + lane &* laneStride - laneHeaderStride)
    }

    /// The calling thread's read lane, marked as used (`ReadLanes.register(lane:)`).
    @inlinable
    var currentLaneIndex: Int {
        let lane = Int(ThreadNumber.current() & laneMask)
        lanes.register(lane: lane)
        return lane
    }

    /// The hash `key` is placed by in its stripe's table (seeded per process).
    @inlinable
    func tableHash(of key: Key) -> Int { TableStripe<Key, Entry>.hash(of: key) }

    /// `key`'s policy hash (`stripeHash.unseeded`: it picks the key's stripe and, seeded,
    /// its counters), or 0 unless `withPolicyHash`, and its `tableHash(of:)`: for string
    /// keys, both in one pass over the bytes.
    @inlinable @inline(__always)
    func hashes(of key: Key, withPolicyHash: Bool) -> (policy: UInt32, table: Int) {
        if let (policy, table) = ByteHash.hashPair(ofKey: key, first: ByteHash.unseededStart, second: tableHashStart) {
            let hashes = Self.hashes(policyWord: policy, tableWord: table)
            return (withPolicyHash ? hashes.policy : 0, hashes.table)
        }
        return (withPolicyHash ? stripeHash.unseeded(key) : 0, tableHash(of: key))
    }

    /// A string key's two hashes from its words (`ByteHash` of its bytes from
    /// `ByteHash.unseededStart` and from `tableHashStart`), as `PolicyHash.unseeded` and
    /// `TableKey.hashValue` finish them.
    @inlinable
    static func hashes(policyWord: UInt64, tableWord: UInt64) -> (policy: UInt32, table: Int) {
        (PolicyHash<Key>.folded(policyWord), Int(truncatingIfNeeded: ByteHash.mix(tableWord, ByteHash.secret1)))
    }

    /// The stripe that holds `key`.
    @inlinable
    func stripe(for key: Key) -> TableStripe<Key, Entry> {
        stripes[stripeIndex(for: key)]
    }

    /// The index of the stripe that holds `key`.
    @inlinable
    func stripeIndex(for key: Key) -> Int {
        isStriped ? stripeIndex(forHash: stripeHash.unseeded(key)) : 0
    }

    /// The stripe of the key whose unseeded policy hash is `hash`.
    @inlinable
    func stripe(forHash hash: UInt32) -> TableStripe<Key, Entry> {
        stripes[stripeIndex(forHash: hash)]
    }

    /// Calls `body` with the stripe at `index`, without retaining it.
    @inlinable
    func withStripe<Result>(at index: Int, _ body: (TableStripe<Key, Entry>) -> Result) -> Result {
        unretainedStripes[index]._withUnsafeGuaranteedRef(body)
    }

    @inlinable
    func stripeIndex(forHash hash: UInt32) -> Int {
        if stripeMask == 0 { return 0 }
        let mixed = (hash ^ (hash >> 16)) &* 0x45D9_F3B
        return Int((mixed ^ (mixed >> 16)) & stripeMask)
    }

    /// Whether changes to the table must take the read lanes' locks (readers without
    /// the cache's lock may be looking).
    @inlinable
    var isStriped: Bool { stripeMask != 0 }

    /// Makes every later read take the cache's lock (before an entry that can expire
    /// is stored or given a deadline, or ages are tracked). Called with the cache's lock held.
    @usableFromInline
    func requireCacheLockForReads() {
        guard !readsNeedCacheLock else { return }
        readsNeedCacheLock = true
        lanes.forEach { part in
            part.lock()
            part.readsSkipCacheLock = false
            part.unlock()
        }
        // In-place writers check the flag holding the stripe's write lock: once each has
        // been taken, none that saw it set is still writing.
        for stripe in stripes { stripe.writeLock.withLock {} }
    }

    /// The entry of `key`. Called with the cache's lock held.
    @inlinable
    func entry(forKey key: Key) -> Entry? {
        entry(forKey: key, hash: isStriped ? stripeHash.unseeded(key) : 0)
    }

    /// The entry of `key`, whose unseeded policy hash (unused under `.lru`) is `hash`.
    /// Called with the cache's lock held.
    @inlinable
    func entry(forKey key: Key, hash: UInt32) -> Entry? {
        entry(forKey: key, hash: hash, tableHash: tableHash(of: key))
    }

    /// `entry(forKey:hash:)` for a caller that has the key's `tableHash(of:)`.
    @inlinable
    func entry(forKey key: Key, hash: UInt32, tableHash: Int) -> Entry? {
        let stripeIndex = stripeIndex(forHash: hash)
        guard isStriped else { return stripes[stripeIndex].entry(forKey: key, hash: tableHash) }
        // A writer replacing a value in place does not hold the cache's lock: the nodes
        // read stay valid while a read lane's lock of the stripe is held.
        let part = lane(currentLaneIndex, stripe: stripeIndex)
        part.lock()
        defer { part.unlock() }
        return withStripe(at: stripeIndex) { $0.entry(forKey: key, hash: tableHash) }
    }

    /// Every key, in no particular order. Called with the cache's lock held.
    func keys() -> [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        for stripe in stripes {
            stripe.writeLock.withLock { stripe.forEach { key, _ in keys.append(key) } }
        }
        return keys
    }

    /// Sizes each stripe's batches of retired nodes, which hold replaced and removed
    /// values (a batch is a grace period, then a background task): 64 nodes, or fewer, so
    /// that all stripes together hold at most a quarter of the count limit and one of the
    /// cache's batches by cost (`costBatch`): never much of its memory. One node unless
    /// `inBatches` (values released in the background): each is freed by the change
    /// that retired it. Called with the cache's lock held.
    func setReleaseBatches(countLimit: Int, costBatch: Int64, inBatches: Bool) {
        let stripeCount = stripes.count
        for stripe in stripes {
            stripe.writeLock.withLock {
                stripe.releaseBatchCount = inBatches ? max(1, min(64, countLimit / (4 * stripeCount))) : 1
                stripe.releaseBatchCost = inBatches ? max(1, costBatch / Int64(stripeCount)) : 1
            }
        }
    }

    /// Moves the stripe's retired nodes to `fullRetired` if they make a batch. Called
    /// holding the cache's lock and the stripe's `writeLock`.
    @inlinable
    func takeRetiredIfFull(of stripe: TableStripe<Key, Entry>, at index: Int) {
        if let retired = stripe.takeRetiredIfFull(stripe: index) { fullRetired.append(retired) }
    }

    /// Every retired node, from every stripe, for `MemoryCache.free` (which waits for
    /// their grace periods).
    /// Called with the cache's lock held, or by the deinitializer.
    func takeReleased() -> [RetiredNodes<Key, Entry>] {
        var batches = fullRetired
        fullRetired = []
        for (index, stripe) in stripes.enumerated() {
            if let retired = stripe.writeLock.withLock({ stripe.takeRetired(stripe: index) }) { batches.append(retired) }
        }
        return batches
    }
}
