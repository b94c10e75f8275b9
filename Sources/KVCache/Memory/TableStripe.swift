import Synchronization

/// One stripe of a memory cache's hash table: the entries whose keys hash to it,
/// behind a lock of its own, and the reads of them not yet told to the policy.
///
/// Under the adaptive policy a read hit takes only its stripe's lock: it finds the
/// entry, counts the hit and records the entry's slot in the stripe's read buffer.
/// The policy replays the buffers later under the cache's lock, taken with a
/// try-lock (Caffeine's read buffers); a read recorded while a buffer is full is
/// dropped, which costs the policy precision, never a wrong value. Writers hold the
/// cache's lock and take a stripe's lock to change its table, so a reader holding
/// only the stripe's lock sees a table that does not change under it.
@usableFromInline
final class TableStripe<Key: Hashable, Entry> {
    /// Reads a buffer holds before the reader that fills it tries to replay them.
    @inlinable static var bufferCapacity: Int { 32 }

    /// What readers write, in memory of its own: the mutex and the counters in one
    /// 64-byte line, the read buffer in the lines after it. No other stripe's (or
    /// object's) data shares those lines, so readers of different stripes on
    /// different cores do not take cache lines from one another.
    @usableFromInline let mutex: PThreadMutex
    // Guarded by `mutex`; also read (never written) by the cache's lock holder.
    @usableFromInline @exclusivity(unchecked) var table: [TableKey<Key>: Entry] = [:]
    /// Whether reads may skip the cache's lock: false once some entry can expire or
    /// ages are tracked, since those reads need the entry's times (kept under the
    /// cache's lock). It never turns back on.
    @usableFromInline @exclusivity(unchecked) var readsSkipCacheLock: Bool
    /// This stripe's bit in the storage's mask of stripes with recorded reads.
    @usableFromInline let bit: UInt64

    @inlinable static var lineSize: Int { 64 }
    @inlinable static var countersOffset: Int { 40 }

    /// Recorded reads: the slot in the low 32 bits, the key's unseeded policy hash in
    /// the high 32 (so the replay need not hash the key again).
    @inlinable
    var buffer: UnsafeMutablePointer<UInt64> {
        (mutex.memory + Self.lineSize).assumingMemoryBound(to: UInt64.self)
    }

    /// Reads in `buffer`, then hits and misses counted here.
    @inlinable
    var counters: UnsafeMutablePointer<Int> {
        (mutex.memory + Self.countersOffset).assumingMemoryBound(to: Int.self)
    }

    @inlinable
    var buffered: Int {
        get { counters[0] }
        set { counters[0] = newValue }
    }

    @inlinable
    var hits: Int {
        get { counters[1] }
        set { counters[1] = newValue }
    }

    @inlinable
    var misses: Int {
        get { counters[2] }
        set { counters[2] = newValue }
    }

    init(index: Int, readsSkipCacheLock: Bool) {
        precondition(PThreadMutex.size <= Self.countersOffset)
        self.readsSkipCacheLock = readsSkipCacheLock
        bit = 1 << UInt64(index)
        mutex = PThreadMutex(byteCount: Self.lineSize + Self.bufferCapacity * 8, alignment: Self.lineSize)
        (mutex.memory + Self.countersOffset).bindMemory(to: Int.self, capacity: 3).initialize(repeating: 0, count: 3)
        (mutex.memory + Self.lineSize).bindMemory(to: UInt64.self, capacity: Self.bufferCapacity)
            .initialize(repeating: 0, count: Self.bufferCapacity)
    }

    /// Records a read of the entry in `slot`, marking the stripe in `pending` when its
    /// buffer was empty; returns whether the buffer is now full. Called with `mutex`
    /// held. A read that finds the buffer full is dropped.
    @inlinable
    func record(_ slot: Int32, hash: UInt32, pending: borrowing Atomic<UInt64>) -> Bool {
        guard buffered < Self.bufferCapacity else { return true }
        if buffered == 0 { pending.bitwiseOr(bit, ordering: .relaxed) }
        buffer[buffered] = UInt64(UInt32(bitPattern: slot)) | UInt64(hash) << 32
        buffered &+= 1
        return buffered == Self.bufferCapacity
    }

    /// Moves the recorded reads, oldest first, into `reads` (room for
    /// `bufferCapacity`) and returns how many. Called with `mutex` held.
    @inlinable
    func takeReads(into reads: UnsafeMutableBufferPointer<UInt64>) -> Int {
        let count = buffered
        for index in 0..<count { reads[index] = buffer[index] }
        buffered = 0
        return count
    }
}
