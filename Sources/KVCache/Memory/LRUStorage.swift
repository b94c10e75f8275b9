/// The entries of a memory cache in least-recently-used order. Not thread-safe.
///
/// A hash table maps each key to a slot index. Slots live in one contiguous
/// slab and are threaded into a doubly-linked recency list by `Int32` indices.
/// Compared with one heap object per entry this saves an allocation per
/// insertion. The links live in their own compact array (8 bytes a slot):
/// moving an entry to the front touches both neighbours, and in a small array
/// those are far more often in the processor's cache. Freed slots form a free
/// list and are reused, so the slab grows only with the peak count.
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

        @inlinable
        init(key: Key, value: Value, cost: Int64, accessTime: Double, deadline: Double, lifetime: Double) {
            self.key = key
            self.value = value
            self.cost = cost
            self.accessTime = accessTime
            self.deadline = deadline
            self.lifetime = lifetime
        }
    }

    /// A slot's place in the recency list (or in the free list).
    @usableFromInline
    struct Link {
        /// Toward the most recently used entry; `none` at the head.
        @usableFromInline var previous: Int32
        /// Toward the least recently used entry; `none` at the tail.
        @usableFromInline var next: Int32

        @inlinable
        init(previous: Int32, next: Int32) {
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

    // The owner's lock guarantees exclusive access, so run-time exclusivity
    // checks on these class properties are turned off (they cost a
    // thread-local lookup per access, across module boundaries).

    @usableFromInline @exclusivity(unchecked) var table: [Key: Int32] = [:]
    @usableFromInline @exclusivity(unchecked) var slots: UnsafeMutablePointer<Slot>?
    @usableFromInline @exclusivity(unchecked) var links: UnsafeMutablePointer<Link>?
    /// Slots `0..<initializedCount` are initialized; the rest of `capacity` is raw memory.
    @usableFromInline @exclusivity(unchecked) var capacity: Int32 = 0
    @usableFromInline @exclusivity(unchecked) var initializedCount: Int32 = 0
    @usableFromInline @exclusivity(unchecked) var freeHead: Int32 = none
    /// The most recently used entry.
    @usableFromInline @exclusivity(unchecked) var head: Int32 = none
    /// The least recently used entry, the next to evict.
    @usableFromInline @exclusivity(unchecked) var tail: Int32 = none
    @usableFromInline @exclusivity(unchecked) var totalCost = CostTotal()
    /// Entries whose deadline is finite; sweeping for expired entries is pointless without them.
    @usableFromInline @exclusivity(unchecked) var expiringCount = 0

    @usableFromInline
    init() {}

    deinit {
        if let slots, let links {
            slots.deinitialize(count: Int(initializedCount))
            slots.deallocate()
            links.deallocate()
        }
    }

    @inlinable
    var count: Int { table.count }

    /// Slots in the slab, used or free.
    var slotCount: Int { Int(initializedCount) }

    @inlinable
    func index(forKey key: Key) -> Int32? {
        table[key]
    }

    @inlinable
    func slot(at index: Int32) -> UnsafeMutablePointer<Slot> {
        slots.unsafelyUnwrapped + Int(index)
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
        let slot = slot(at: candidate)
        if candidate == freeHead {
            freeHead = link(at: candidate).pointee.next
            slot.pointee = Slot(
                key: key, value: value, cost: cost, accessTime: accessTime, deadline: deadline, lifetime: lifetime)
        } else {
            initializedCount += 1
            slot.initialize(to: Slot(
                key: key, value: value, cost: cost, accessTime: accessTime, deadline: deadline, lifetime: lifetime))
        }
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
        link(at: index).pointee.next = freeHead
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
            slot(at: index).pointee.accessTime = accessTime
            index = link(at: index).pointee.next
        }
    }

    /// Calls `body` with every entry, most recently used first.
    func forEach(_ body: (Key, Value) -> Void) {
        var index = head
        while index != Self.none {
            let slot = slot(at: index)
            body(slot.pointee.key.unsafelyUnwrapped, slot.pointee.value.unsafelyUnwrapped)
            index = link(at: index).pointee.next
        }
    }

    /// The keys from most to least recently used (for tests).
    var keysByRecency: [Key] {
        var keys: [Key] = []
        forEach { key, _ in keys.append(key) }
        return keys
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
        let link = link(at: index).pointee
        if link.previous != Self.none { self.link(at: link.previous).pointee.next = link.next } else { head = link.next }
        if link.next != Self.none { self.link(at: link.next).pointee.previous = link.previous } else { tail = link.previous }
    }

    @inlinable
    func linkAtHead(_ index: Int32) {
        link(at: index).pointee = Link(previous: Self.none, next: head)
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
        let newCapacity = Int32(clamping: max(16, Int(capacity) * 2))
        let newSlots = UnsafeMutablePointer<Slot>.allocate(capacity: Int(newCapacity))
        let newLinks = UnsafeMutablePointer<Link>.allocate(capacity: Int(newCapacity))
        if let slots, let links {
            newSlots.moveInitialize(from: slots, count: Int(initializedCount))
            newLinks.moveInitialize(from: links, count: Int(initializedCount))
            slots.deallocate()
            links.deallocate()
        }
        slots = newSlots
        links = newLinks
        capacity = newCapacity
    }
}
