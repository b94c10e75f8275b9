// What the slab holds per slot (key and cost, times, recency link) and where an
// entry is under the adaptive policy.
extension LRUStorage {
    /// The bookkeeping of one entry, or a free slot when `key` is `nil`.
    @usableFromInline
    struct Slot {
        @usableFromInline var key: Key?
        @usableFromInline var cost: Int64

        @inlinable
        init(key: Key, cost: Int64) {
            self.key = key
            self.cost = cost
        }
    }

    /// When an entry was last used and when it expires.
    @usableFromInline
    struct Times {
        /// Monotonic seconds of the last set or read (kept only while ages are tracked).
        @usableFromInline var accessTime: Double
        /// Wall-clock seconds after which the entry is expired; `.infinity` if never.
        @usableFromInline var deadline: Double
        /// Seconds a read pushes the deadline forward, when reads extend it; 0 if they cannot.
        @usableFromInline var lifetime: Double

        /// The times of every entry until some entry needs others.
        @inlinable
        init(accessTime: Double = 0, deadline: Double = .infinity, lifetime: Double = 0) {
            self.accessTime = accessTime
            self.deadline = deadline
            self.lifetime = lifetime
        }

        @inlinable
        var isDefault: Bool { accessTime == 0 && deadline == .infinity && lifetime == 0 }
    }

    /// A slot's place in the recency list (or in the free list), with what moving
    /// the entry to another segment needs: its segment and its cost. One entry's
    /// move then reads one line of memory, not three (links, segments, slots).
    @usableFromInline
    struct Link {
        /// Toward the most recently used entry; `none` at the head.
        @usableFromInline var previous: Int32
        /// Toward the least recently used entry; `none` at the tail.
        @usableFromInline var next: Int32
        /// The segment's raw value in the low 2 bits, then the saturation mark; above
        /// them the cost, or `costInSlot` when the cost does not fit (then the slot's
        /// is read).
        @usableFromInline var tag: UInt32

        /// The largest cost a link holds, also the mark of a cost kept only in the slot.
        @inlinable static var costInSlot: UInt32 { UInt32.max >> 3 }

        @inlinable
        init(previous: Int32, next: Int32, segment: Segment, cost: Int64) {
            self.previous = previous
            self.next = next
            let small = cost >= 0 && cost < Int64(Self.costInSlot) ? UInt32(cost) : Self.costInSlot
            tag = small << 3 | UInt32(segment.rawValue)
        }

        /// Whether the policy found all the key's sketch counters at the maximum (valid
        /// while the sketch's epoch is the storage's `saturationEpoch`), so counting a
        /// use of it would change nothing.
        @inlinable
        var isSaturated: Bool {
            get { tag & 4 != 0 }
            set { tag = newValue ? tag | 4 : tag & ~4 }
        }

        @inlinable
        var segment: Segment {
            get { Segment(rawValue: UInt8(truncatingIfNeeded: tag & 3)).unsafelyUnwrapped }
            set { tag = tag & ~3 | UInt32(newValue.rawValue) }
        }

        /// The cost, if the link holds it.
        @inlinable
        var smallCost: Int64? {
            let small = tag >> 3
            return small == Self.costInSlot ? nil : Int64(small)
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

    /// Where an entry is under the adaptive policy.
    @usableFromInline
    enum Segment: UInt8 {
        /// New entries, in recency order; the `.lru` policy's one list.
        case window
        /// Entries admitted from the window, not read since; the main space's victims come from here.
        case probation
        /// Entries read again while in probation.
        case protected
    }

    /// The two ends of a list other than the window.
    @usableFromInline
    struct ListEnds {
        @usableFromInline var head: Int32
        @usableFromInline var tail: Int32

        @usableFromInline
        init(head: Int32 = LRUStorage.none, tail: Int32 = LRUStorage.none) {
            self.head = head
            self.tail = tail
        }
    }
}
