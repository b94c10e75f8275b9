/// The entries of a memory cache in least-recently-used order. Not thread-safe.
///
/// A hash table maps each key to a slot index; the slots live in one
/// contiguous slab and are threaded into a doubly-linked recency list by
/// `Int32` indices. Compared with one heap object per entry this saves an
/// allocation per insertion and keeps neighbours close in memory. Freed slots
/// form a free list and are reused, so the slab grows only with the peak count.
@usableFromInline
final class LRUStorage<Key: Hashable, Value> {
    /// One entry, or a free slot when `key` is `nil`.
    @usableFromInline
    struct Slot {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int64
        /// Monotonic seconds of the last set or read (kept only while ages are tracked).
        @usableFromInline var accessTime: Double
        /// Wall-clock seconds after which the entry is expired; `.infinity` if never.
        @usableFromInline var deadline: Double
        /// Seconds a read pushes the deadline forward, when reads extend it; 0 if they cannot.
        @usableFromInline var lifetime: Double
        /// Toward the most recently used entry; `none` at the head.
        @usableFromInline var previous: Int32
        /// Toward the least recently used entry; `none` at the tail. Links free slots too.
        @usableFromInline var next: Int32

        @inlinable
        init(
            key: Key, value: Value, cost: Int64, accessTime: Double,
            deadline: Double, lifetime: Double, previous: Int32, next: Int32
        ) {
            self.key = key
            self.value = value
            self.cost = cost
            self.accessTime = accessTime
            self.deadline = deadline
            self.lifetime = lifetime
            self.previous = previous
            self.next = next
        }
    }

    /// An entry taken out of the storage.
    @usableFromInline
    struct RemovedEntry {
        @usableFromInline let key: Key
        @usableFromInline let value: Value
        @usableFromInline let cost: Int64

        @inlinable
        init(key: Key, value: Value, cost: Int64) {
            self.key = key
            self.value = value
            self.cost = cost
        }
    }

    @usableFromInline static var none: Int32 { -1 }

    @usableFromInline var table: [Key: Int32] = [:]
    @usableFromInline var slots: UnsafeMutablePointer<Slot>?
    /// Slots `0..<initializedCount` are initialized; the rest of `capacity` is raw memory.
    @usableFromInline var capacity: Int32 = 0
    @usableFromInline var initializedCount: Int32 = 0
    @usableFromInline var freeHead: Int32 = none
    /// The most recently used entry.
    @usableFromInline var head: Int32 = none
    /// The least recently used entry, the next to evict.
    @usableFromInline var tail: Int32 = none
    @usableFromInline var totalCost = CostTotal()
    /// Entries whose deadline is finite; sweeping for expired entries is pointless without them.
    @usableFromInline var expiringCount = 0

    @usableFromInline
    init() {}

    deinit {
        if let slots {
            slots.deinitialize(count: Int(initializedCount))
            slots.deallocate()
        }
    }

    @inlinable
    var count: Int { table.count }

    @inlinable
    func index(forKey key: Key) -> Int32? {
        table[key]
    }

    @inlinable
    func slot(at index: Int32) -> UnsafeMutablePointer<Slot> {
        slots.unsafelyUnwrapped + Int(index)
    }

    /// Marks an entry as the most recently used.
    @inlinable
    func moveToFront(_ index: Int32) {
        guard index != head else { return }
        unlink(index)
        linkAtHead(index)
    }

    /// Stores a value, replacing and returning the key's previous entry if any.
    /// The entry becomes the most recently used.
    @inlinable
    func setValue(
        _ value: Value, forKey key: Key, cost: Int64,
        accessTime: Double, deadline: Double, lifetime: Double
    ) -> RemovedEntry? {
        let candidate = peekFreeSlot()
        // One hash lookup: the slot index is stored only if the key is new.
        let existing = Self.claim(&table[key, default: Self.none], with: candidate)
        if existing != Self.none {
            let slot = slot(at: existing)
            let old = RemovedEntry(key: key, value: slot.pointee.value.take().unsafelyUnwrapped, cost: slot.pointee.cost)
            slot.pointee.value = value
            totalCost.subtract(old.cost)
            totalCost.add(cost)
            slot.pointee.cost = cost
            slot.pointee.accessTime = accessTime
            if slot.pointee.deadline != .infinity { expiringCount -= 1 }
            if deadline != .infinity { expiringCount += 1 }
            slot.pointee.deadline = deadline
            slot.pointee.lifetime = lifetime
            moveToFront(existing)
            return old
        }
        takeFreeSlot(candidate)
        slot(at: candidate).initialize(to: Slot(
            key: key, value: value, cost: cost, accessTime: accessTime,
            deadline: deadline, lifetime: lifetime, previous: Self.none, next: Self.none))
        totalCost.add(cost)
        if deadline != .infinity { expiringCount += 1 }
        linkAtHead(candidate)
        return nil
    }

    /// Removes the entry in a slot and frees the slot.
    @inlinable
    func remove(at index: Int32) -> RemovedEntry {
        unlink(index)
        let slot = slot(at: index)
        let key = slot.pointee.key.take().unsafelyUnwrapped
        let value = slot.pointee.value.take().unsafelyUnwrapped
        let cost = slot.pointee.cost
        table.removeValue(forKey: key)
        totalCost.subtract(cost)
        if slot.pointee.deadline != .infinity { expiringCount -= 1 }
        slot.pointee.next = freeHead
        freeHead = index
        return RemovedEntry(key: key, value: value, cost: cost)
    }

    /// Removes the least recently used entry, if any.
    @inlinable
    func removeLeastRecentlyUsed() -> RemovedEntry? {
        tail == Self.none ? nil : remove(at: tail)
    }

    /// Sets every entry's access time, when age tracking starts.
    func stampAll(accessTime: Double) {
        var index = head
        while index != Self.none {
            let slot = slot(at: index)
            slot.pointee.accessTime = accessTime
            index = slot.pointee.next
        }
    }

    /// Calls `body` with every entry, most recently used first.
    func forEach(_ body: (Key, Value) -> Void) {
        var index = head
        while index != Self.none {
            let slot = slot(at: index)
            body(slot.pointee.key.unsafelyUnwrapped, slot.pointee.value.unsafelyUnwrapped)
            index = slot.pointee.next
        }
    }

    // MARK: - List and free list

    @inlinable
    static func claim(_ stored: inout Int32, with candidate: Int32) -> Int32 {
        if stored == none {
            stored = candidate
            return none
        }
        return stored
    }

    @inlinable
    func unlink(_ index: Int32) {
        let slot = slot(at: index)
        let previous = slot.pointee.previous
        let next = slot.pointee.next
        if previous != Self.none { self.slot(at: previous).pointee.next = next } else { head = next }
        if next != Self.none { self.slot(at: next).pointee.previous = previous } else { tail = previous }
    }

    @inlinable
    func linkAtHead(_ index: Int32) {
        let slot = slot(at: index)
        slot.pointee.previous = Self.none
        slot.pointee.next = head
        if head != Self.none { self.slot(at: head).pointee.previous = index } else { tail = index }
        head = index
    }

    /// The slot the next insertion will use, growing the slab if none is free.
    @inlinable
    func peekFreeSlot() -> Int32 {
        if freeHead != Self.none { return freeHead }
        if initializedCount == capacity { grow() }
        return initializedCount
    }

    /// Takes the slot returned by `peekFreeSlot()` out of the free space; the
    /// caller initializes it.
    @inlinable
    func takeFreeSlot(_ index: Int32) {
        if index == freeHead {
            let slot = slot(at: index)
            freeHead = slot.pointee.next
            // Free slots stay initialized (with nil key and value); drop the old one
            // so the caller can initialize the memory afresh.
            slot.deinitialize(count: 1)
        } else {
            initializedCount += 1
        }
    }

    @usableFromInline
    func grow() {
        precondition(capacity < Int32.max, "MemoryCache cannot hold more than Int32.max entries")
        let newCapacity = Int32(clamping: max(16, Int(capacity) * 2))
        let newSlots = UnsafeMutablePointer<Slot>.allocate(capacity: Int(newCapacity))
        if let slots {
            newSlots.moveInitialize(from: slots, count: Int(initializedCount))
            slots.deallocate()
        }
        slots = newSlots
        capacity = newCapacity
    }
}
