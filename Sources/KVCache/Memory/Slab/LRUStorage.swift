import Synchronization

/// The entries of a memory cache in least-recently-used order: one list under the
/// `.lru` policy, or the adaptive policy's three (window, probation, protected),
/// each in its own recency order. Not thread-safe.
///
/// A hash table maps each key to its value and a slot index. Slots live in one
/// contiguous slab and are threaded into a doubly-linked recency list by
/// `Int32` indices; compared with one heap object per entry this saves an
/// allocation per insertion. Freed slots form a free list and are reused, so
/// the slab grows only with the peak count.
///
/// Layout follows what a read touches. A read finds the value in the table
/// itself, as a plain dictionary would; the links live in their own compact
/// array (12 bytes a slot, with the entry's segment and, when it fits, its cost)
/// because moving an entry to the front or to another segment touches both
/// neighbours; the rest of a slot (key, cost) is read only when an entry can
/// expire, is evicted, or costs more than a link holds. Times (24 bytes a slot) get
/// their own slab, allocated only once some entry can expire or ages are tracked.
@usableFromInline
final class LRUStorage<Key: Hashable, Value> {
    @usableFromInline static var none: Int32 { -1 }
    /// The `previous` link of a free slot, so a recorded read of a freed slot is
    /// recognized from the link the replay reads anyway.
    @usableFromInline static var free: Int32 { -2 }

    // The owner's lock guarantees exclusive access, so run-time exclusivity
    // checks on these class properties are turned off (they cost a
    // thread-local lookup per access, across module boundaries).

    /// The hash table, in stripes: one under `.lru`, which is read only under the
    /// cache's lock; several under the adaptive policy, whose read hits take only
    /// their read lane's lock of their stripe (`LaneStripe`).
    @usableFromInline let stripes: ContiguousArray<TableStripe<Key, Entry>>
    /// The same stripes, unretained (`stripes` owns them): a read does not touch a
    /// stripe's reference count, which every thread reading that stripe would share.
    @usableFromInline let unretainedStripes: ContiguousArray<Unmanaged<TableStripe<Key, Entry>>>
    @usableFromInline let stripeMask: UInt32
    @usableFromInline let stripeHash = PolicyHash<Key>(seed: 0)
    /// The read lanes (one, unused, under `.lru`).
    @usableFromInline let lanes: ReadLanes
    /// `lanes`' memory, strides and count - 1, kept here so that a read finds its lane
    /// without touching the `ReadLanes` object.
    @usableFromInline let laneBase: UnsafeMutableRawPointer
    @usableFromInline let laneStride: Int
    @usableFromInline let laneStripeStride: Int
    @usableFromInline let laneHeaderStride: Int
    @usableFromInline let laneMask: UInt32
    /// Entries in the table (all stripes).
    @usableFromInline @exclusivity(unchecked) var liveCount = 0
    /// Whether reads must take the cache's lock from now on (some entry can expire,
    /// or ages are tracked).
    @usableFromInline @exclusivity(unchecked) var readsNeedCacheLock: Bool
    @usableFromInline @exclusivity(unchecked) var slots: UnsafeMutablePointer<Slot>?
    @usableFromInline @exclusivity(unchecked) var links: UnsafeMutablePointer<Link>?
    /// `nil` while every entry has the default times.
    @usableFromInline @exclusivity(unchecked) var times: UnsafeMutablePointer<Times>?
    /// Slots `0..<initializedCount` are initialized; the rest of `capacity` is raw memory.
    @usableFromInline @exclusivity(unchecked) var capacity: Int32 = 0
    @usableFromInline @exclusivity(unchecked) var initializedCount: Int32 = 0
    @usableFromInline @exclusivity(unchecked) var freeHead: Int32 = none
    /// The most recently used entry (of the window, when segmented).
    @usableFromInline @exclusivity(unchecked) var head: Int32 = none
    /// The least recently used entry (of the window, when segmented), the next to evict under `.lru`.
    @usableFromInline @exclusivity(unchecked) var tail: Int32 = none
    @usableFromInline @exclusivity(unchecked) var totalCost = CostTotal()
    /// Whether entries are placed in the adaptive policy's segments (each link says
    /// which); under `.lru` every entry is on the one list (`head`, `tail`), which is
    /// also the window's.
    @usableFromInline let isSegmented: Bool
    @usableFromInline @exclusivity(unchecked) var probation = ListEnds()
    @usableFromInline @exclusivity(unchecked) var protected = ListEnds()
    /// Entries and cost per segment (segmented storage only); probation's are the rest.
    @usableFromInline @exclusivity(unchecked) var windowSize = SegmentSize()
    @usableFromInline @exclusivity(unchecked) var protectedSize = SegmentSize()
    /// The sketch epoch the links' saturation marks hold for; marks of an earlier epoch
    /// are cleared before one is set.
    @usableFromInline @exclusivity(unchecked) var saturationEpoch: UInt64 = 0
    /// Slots the slab grows to at most while it can (the count limit and one more,
    /// the insertion an eviction follows), so a cache bounded by count does not hold
    /// up to twice the slots it can use. Past it the slab doubles again.
    @usableFromInline @exclusivity(unchecked) var slotTarget: Int32 = .max
    /// The `slotTarget` of a cache whose count limit is `limit` (not negative).
    static func slotTarget(countLimit limit: Int) -> Int32 {
        limit < Int(Int32.max) ? Int32(limit + 1) : .max
    }

    /// Batches of retired table nodes to free once their stripe's grace period has passed
    /// (`MemoryCache.complete`): taken from the stripes by the holder of the cache's lock.
    @usableFromInline @exclusivity(unchecked) var fullRetired: [RetiredNodes<Key, Entry>] = []

    /// Entries whose deadline is finite; sweeping for expired entries is pointless without them.
    @usableFromInline @exclusivity(unchecked) var expiringCount = 0

    /// Storage whose entries are placed in segments (the adaptive policy's), with a
    /// striped table whose hits may skip the cache's lock.
    /// `laneCount` read lanes, or four per processor (`ReadLanes.countForStripedTable`).
    init(segmented: Bool, readsNeedCacheLock: Bool = false, laneCount: Int? = nil) {
        let stripeCount = segmented ? Self.stripeCount : 1
        stripes = ContiguousArray((0..<stripeCount).map { _ in TableStripe() })
        unretainedStripes = ContiguousArray(stripes.map { Unmanaged.passUnretained($0) })
        stripeMask = UInt32(stripeCount - 1)
        lanes = ReadLanes(count: segmented ? laneCount ?? ReadLanes.countForStripedTable : 1, stripeCount: stripeCount,
                          readsSkipCacheLock: segmented && !readsNeedCacheLock)
        laneBase = lanes.base
        laneStride = lanes.laneStride
        laneStripeStride = lanes.stripeStride
        laneHeaderStride = lanes.headerStride
        laneMask = UInt32(lanes.count - 1)
        self.readsNeedCacheLock = !segmented || readsNeedCacheLock
        isSegmented = segmented
    }

    /// Stripes of a segmented table: a power of two, at most 64 (a bit each in
    /// `LaneHeader.pendingStripes`).
    static var stripeCount: Int { 16 }

    deinit {
        if let slots, let links {
            slots.deinitialize(count: Int(initializedCount))
            slots.deallocate()
            links.deallocate()
        }
        times?.deallocate()
    }

    @inlinable
    var count: Int { liveCount }

    /// Exchanges every entry with `other`, so the owner can keep this object
    /// (and never has to retain it) while the entries leave.
    func swapContents(with other: LRUStorage) {
        for (index, (stripe, otherStripe)) in zip(stripes, other.stripes).enumerated() {
            stripe.writeLock.lock()
            stripe.swapContents(with: otherStripe)
            stripe.writeLock.unlock()
            // The recorded reads name slots of the slab that leaves.
            for lane in 0..<lanes.count {
                let part = lanes[lane: lane, stripe: index]
                part.lock()
                part.buffered = 0
                part.unlock()
            }
        }
        // Readers that found the table's nodes before the swap have left them (each
        // part's lock was taken since): the other storage may free them.
        swap(&fullRetired, &other.fullRetired)
        swap(&liveCount, &other.liveCount)
        swap(&slots, &other.slots)
        swap(&links, &other.links)
        swap(&times, &other.times)
        swap(&capacity, &other.capacity)
        swap(&initializedCount, &other.initializedCount)
        swap(&freeHead, &other.freeHead)
        swap(&head, &other.head)
        swap(&tail, &other.tail)
        swap(&totalCost, &other.totalCost)
        swap(&expiringCount, &other.expiringCount)
        swap(&probation, &other.probation)
        swap(&protected, &other.protected)
        swap(&windowSize, &other.windowSize)
        swap(&protectedSize, &other.protectedSize)
        swap(&saturationEpoch, &other.saturationEpoch)
    }

    /// Clears every link's saturation mark and makes `epoch` the one new marks hold for.
    @usableFromInline
    func resetSaturationMarks(toEpoch epoch: UInt64) {
        for index in 0..<Int(initializedCount) { links.unsafelyUnwrapped[index].isSaturated = false }
        saturationEpoch = epoch
    }

    /// An empty storage of the same kind (segmented or not).
    func emptyCopy() -> LRUStorage {
        // One lane: no thread reads the copy, which only carries entries away (up to 64
        // lanes would cost 7 KB each on every removeAll).
        LRUStorage(segmented: isSegmented, readsNeedCacheLock: true, laneCount: 1)
    }

    /// Slots in the slab, used or free.
    var slotCount: Int { Int(initializedCount) }

    /// Whether some entry has a deadline, so reads must look at its slot.
    @inlinable
    var hasExpiringEntries: Bool { expiringCount > 0 }

    /// Whether a slot holds an entry (slots past `initializedCount` are not slots yet).
    @inlinable
    func isLive(_ index: Int32) -> Bool {
        index < initializedCount && link(at: index).pointee.previous != Self.free
    }

    @inlinable
    func slot(at index: Int32) -> UnsafeMutablePointer<Slot> {
        slots.unsafelyUnwrapped + Int(index)
    }

    /// The times of the entry in a slot.
    @inlinable
    func times(at index: Int32) -> Times {
        if let times { return times[Int(index)] }
        return Times()
    }

    /// The times of a slot, to change them.
    @inlinable
    func mutableTimes(at index: Int32) -> UnsafeMutablePointer<Times> {
        if times == nil { allocateTimes() }
        return times.unsafelyUnwrapped + Int(index)
    }

    /// Gives the entry in a slot a new deadline and extendable lifetime, keeping the
    /// count of expiring entries (reads skip expiration checks while it is 0).
    func setExpiration(at index: Int32, deadline: Double, lifetime: Double) {
        if deadline != .infinity { requireCacheLockForReads() }
        let times = mutableTimes(at: index)
        if times.pointee.deadline != .infinity { expiringCount -= 1 }
        if deadline != .infinity { expiringCount += 1 }
        times.pointee.deadline = deadline
        times.pointee.lifetime = lifetime
    }

    @usableFromInline
    func allocateTimes() {
        let newTimes = UnsafeMutablePointer<Times>.allocate(capacity: Int(capacity))
        newTimes.initialize(repeating: Times(), count: Int(capacity))
        times = newTimes
    }

    @inlinable
    func link(at index: Int32) -> UnsafeMutablePointer<Link> {
        links.unsafelyUnwrapped + Int(index)
    }

    /// Marks an entry as the most recently used.
    @inlinable
    func moveToFront(_ index: Int32) {
        guard index != head else { return }
        unlink(index)
        linkAtHead(index)
    }

    /// Stores a value, replacing and returning the key's previous entry if any.
    /// The entry becomes the most recently used (of its segment, when segmented).
    /// Returns the entry's slot. `hash` is the key's unseeded policy hash when the
    /// table is striped (the caller needs it too), and unused otherwise.
    @inlinable
    func setValue(
        _ value: Value, forKey key: Key, hash: UInt32, tableHash: Int, cost: Int64,
        accessTime: Double, deadline: Double, lifetime: Double
    ) -> (index: Int32, replaced: RemovedEntry?) {
        // Before the entry is visible to readers that skip the cache's lock.
        if deadline != .infinity { requireCacheLockForReads() }
        // One hash lookup whether the key is new or not. A replaced entry
        // moves to the new slot and its old slot is freed.
        let index = peekFreeSlot()
        let stripeIndex = stripeIndex(forHash: hash)
        let stripe = stripes[stripeIndex]
        stripe.writeLock.lock()
        let old = stripe.setEntry(
            Entry(index: index, cost: cost, value: value), forKey: key, hash: tableHash
        ) { [unowned(unsafe) self] in self.slot(at: $0.index).pointee.cost }
        takeRetiredIfFull(of: stripe, at: stripeIndex)
        stripe.writeLock.unlock()
        if old == nil { liveCount += 1 }
        let slot = slot(at: index)
        if index == freeHead {
            freeHead = link(at: index).pointee.next
            slot.pointee = Slot(key: key, cost: cost)
        } else {
            initializedCount += 1
            slot.initialize(to: Slot(key: key, cost: cost))
        }
        let times = Times(accessTime: accessTime, deadline: deadline, lifetime: lifetime)
        if self.times != nil || !times.isDefault {
            mutableTimes(at: index).pointee = times
        }
        totalCost.add(cost)
        if deadline != .infinity { expiringCount += 1 }
        // A replaced entry keeps its segment; a new one starts in the window.
        let segment = old.map { self.segment(at: $0.index) } ?? .window
        link(at: index).pointee = Link(previous: Self.none, next: Self.none, segment: segment, cost: cost)
        if isSegmented {
            resize(segment) { $0.add(cost) }
            linkAtHead(index, of: segment)
        } else {
            linkAtHead(index)
        }
        guard let old else { return (index, nil) }
        let oldCost = freeSlot(old.index)
        return (index, RemovedEntry(key: key, value: old.value, cost: oldCost))
    }

    /// Removes the entry in a slot and frees the slot.
    @inlinable
    func remove(at index: Int32) -> RemovedEntry {
        let key = slot(at: index).pointee.key.take().unsafelyUnwrapped
        let stripeIndex = stripeIndex(for: key)
        let stripe = stripes[stripeIndex]
        let slotCost = slot(at: index).pointee.cost
        stripe.writeLock.lock()
        let value = stripe.removeEntry(forKey: key, hash: tableHash(of: key)) { _ in slotCost }
            .unsafelyUnwrapped.value
        takeRetiredIfFull(of: stripe, at: stripeIndex)
        stripe.writeLock.unlock()
        liveCount -= 1
        let cost = freeSlot(index)
        return RemovedEntry(key: key, value: value, cost: cost)
    }

    /// Unlinks a slot whose key is gone from the table and puts it on the free
    /// list; returns the cost it held.
    @inlinable
    func freeSlot(_ index: Int32) -> Int64 {
        let slot = slot(at: index)
        let cost = slot.pointee.cost
        if isSegmented {
            let segment = segment(at: index)
            unlink(index, from: segment)
            resize(segment) { $0.subtract(cost) }
        } else {
            unlink(index)
        }
        slot.pointee.key = nil
        totalCost.subtract(cost)
        if times(at: index).deadline != .infinity { expiringCount -= 1 }
        link(at: index).pointee.previous = Self.free
        link(at: index).pointee.next = freeHead
        freeHead = index
        return cost
    }

    /// Sets every entry's access time, when age tracking starts.
    func stampAll(accessTime: Double) {
        for index in 0..<initializedCount where isLive(index) {
            mutableTimes(at: index).pointee.accessTime = accessTime
        }
    }

    /// Calls `body` with every entry, in no particular order. Only for a storage that no
    /// cache reads or writes (`emptyCopy()`'s, once filled by `swapContents`).
    func forEach(_ body: (Key, Value) -> Void) {
        for stripe in stripes {
            stripe.forEach { key, entry in body(key, entry.value) }
        }
    }

    /// The keys from most to least recently used (for tests): the window's (under
    /// `.lru`, every entry's), or the given segment's.
    func keysByRecency(in segment: Segment = .window) -> [Key] {
        var keys: [Key] = []
        var index = ends(of: segment).head
        while index != Self.none {
            keys.append(slot(at: index).pointee.key.unsafelyUnwrapped)
            index = link(at: index).pointee.next
        }
        return keys
    }

    // MARK: - List and free list

    @inlinable
    func unlink(_ index: Int32) {
        let link = link(at: index).pointee
        if link.previous != Self.none { self.link(at: link.previous).pointee.next = link.next } else { head = link.next }
        if link.next != Self.none { self.link(at: link.next).pointee.previous = link.previous } else { tail = link.previous }
    }

    @inlinable
    func linkAtHead(_ index: Int32) {
        link(at: index).pointee.previous = Self.none
        link(at: index).pointee.next = head
        if head != Self.none { link(at: head).pointee.previous = index } else { tail = index }
        head = index
    }

    /// The slot the next insertion will use, growing the slab if none is free.
    @inlinable
    func peekFreeSlot() -> Int32 {
        if freeHead != Self.none { return freeHead }
        if initializedCount == capacity { grow() }
        return initializedCount
    }

    @usableFromInline
    func grow() {
        precondition(capacity < Int32.max, "MemoryCache cannot hold more than Int32.max entries")
        var newCapacity = Int32(clamping: max(16, Int(capacity) * 2))
        if capacity < slotTarget { newCapacity = min(newCapacity, slotTarget) }
        let newSlots = UnsafeMutablePointer<Slot>.allocate(capacity: Int(newCapacity))
        let newLinks = UnsafeMutablePointer<Link>.allocate(capacity: Int(newCapacity))
        if let slots, let links {
            newSlots.moveInitialize(from: slots, count: Int(initializedCount))
            newLinks.moveInitialize(from: links, count: Int(initializedCount))
            slots.deallocate()
            links.deallocate()
        }
        if let times {
            let newTimes = UnsafeMutablePointer<Times>.allocate(capacity: Int(newCapacity))
            newTimes.moveInitialize(from: times, count: Int(capacity))
            newTimes.advanced(by: Int(capacity)).initialize(repeating: Times(), count: Int(newCapacity - capacity))
            times.deallocate()
            self.times = newTimes
        }
        slots = newSlots
        links = newLinks
        capacity = newCapacity
    }
}
