import CProcessor
import Foundation

/// A read lane's part of one table stripe: the lock that the lane's readers of the
/// stripe take, the reads they recorded for the policy, and their hits, misses and
/// dropped reads (a view of memory that `ReadLanes` owns; `LaneFields` places each field).
///
/// Under the adaptive policy a read hit takes only this lock, and each thread always
/// reads on the same lane (`ThreadNumber`), so threads on different lanes write no
/// memory in common. Writers of the stripe's table take its write lock, not this one:
/// holding this lock is what keeps the table nodes a reader found from being freed
/// (`ReadLanes.synchronize(stripe:)` waits for it). Reads are
/// recorded in a bounded buffer that the lane drains into the policy under the cache's
/// lock, taken with a try-lock (Caffeine's read buffers); a read that finds the buffer
/// full is dropped, which costs the policy precision, never a wrong value.
@usableFromInline
struct LaneStripe {
    /// Reads the buffer holds before the reader that fills it tries to drain them.
    @inlinable static var bufferCapacity: Int { LaneFields.platform.bufferCapacity }
    @inlinable static var fields: LaneFields { .platform }

    @usableFromInline let memory: UnsafeMutableRawPointer

    @inlinable
    init(memory: UnsafeMutableRawPointer) {
        self.memory = memory
    }

    @inlinable
    var mutex: UnsafeMutablePointer<pthread_mutex_t> {
        memory.assumingMemoryBound(to: pthread_mutex_t.self)
    }

    @inlinable
    func lock() {
        PThreadMutex.lock(mutex)
    }

    @inlinable
    func unlock() {
        PThreadMutex.unlock(mutex)
    }

    /// Takes the lock if it is free; never blocks.
    @inlinable
    func tryLock() -> Bool {
        pthread_mutex_trylock(mutex) == 0
    }

    /// Takes the lock, counting a wait and its time when it was busy (a writer or a drain
    /// held it). Costs what `lock()` does while it is free.
    @inlinable
    func lockCountingWaits() {
        if tryLock() { return }
        let start = kvcache_monotonic_nanoseconds()
        lock()
        waits &+= 1
        waitNanoseconds &+= Int(truncatingIfNeeded: kvcache_monotonic_nanoseconds() &- start)
    }

    // Everything below is guarded by the lock.

    /// The counter `offset` bytes into the part (a `LaneFields` offset).
    @inlinable
    func counter(at offset: Int) -> Int { (memory + offset).load(as: Int.self) }

    @inlinable
    func setCounter(_ value: Int, at offset: Int) { (memory + offset).storeBytes(of: value, as: Int.self) }

    @inlinable
    var buffered: Int {
        get { Int((memory + Self.fields.bufferedOffset).load(as: UInt32.self)) }
        nonmutating set { (memory + Self.fields.bufferedOffset).storeBytes(of: UInt32(truncatingIfNeeded: newValue), as: UInt32.self) }
    }

    /// Whether reads may skip the cache's lock: false once some entry can expire or
    /// ages are tracked, since those reads need the entry's times (kept under the
    /// cache's lock). It never turns back on.
    @inlinable
    var readsSkipCacheLock: Bool {
        get { (memory + Self.fields.skipsCacheLockOffset).load(as: UInt32.self) != 0 }
        nonmutating set { (memory + Self.fields.skipsCacheLockOffset).storeBytes(of: newValue ? 1 : 0, as: UInt32.self) }
    }

    @inlinable
    var hits: Int {
        get { counter(at: Self.fields.hitsOffset) }
        nonmutating set { setCounter(newValue, at: Self.fields.hitsOffset) }
    }

    @inlinable
    var misses: Int {
        get { counter(at: Self.fields.missesOffset) }
        nonmutating set { setCounter(newValue, at: Self.fields.missesOffset) }
    }

    /// Hits the policy never saw: their buffer was full and its drain busy.
    @inlinable
    var dropped: Int {
        get { counter(at: Self.fields.droppedOffset) }
        nonmutating set { setCounter(newValue, at: Self.fields.droppedOffset) }
    }

    /// Values replaced in place by this lane's writers (`MemoryCache.replaceInPlace`):
    /// each is a set and a replacement that the cache's counters have not seen.
    @inlinable
    var replacements: Int {
        get { counter(at: Self.fields.replacementsOffset) }
        nonmutating set { setCounter(newValue, at: Self.fields.replacementsOffset) }
    }

    /// Times this lane's readers found the lock busy, and the nanoseconds they waited
    /// (counted by a cache that measures its serialized sections).
    @inlinable
    var waits: Int {
        get { counter(at: Self.fields.waitsOffset) }
        nonmutating set { setCounter(newValue, at: Self.fields.waitsOffset) }
    }

    @inlinable
    var waitNanoseconds: Int {
        get { counter(at: Self.fields.waitNanosecondsOffset) }
        nonmutating set { setCounter(newValue, at: Self.fields.waitNanosecondsOffset) }
    }

    /// Nanoseconds this lane's in-place writers held (or waited for) the stripe's write
    /// lock, when the cache measures its serialized sections.
    @inlinable
    var writeNanoseconds: Int {
        get { counter(at: Self.fields.writeNanosecondsOffset) }
        nonmutating set { setCounter(newValue, at: Self.fields.writeNanosecondsOffset) }
    }

    /// Marks a recorded use as a write's (a value replaced in place), not a read's: the
    /// policy counts it as a use, but not as a request for what moves its window. Slots
    /// are below `Int32.max`, so the bit is free.
    @inlinable static var writeMark: UInt32 { 1 << 31 }

    /// The recorded reads: the slot in the low 31 bits (with `writeMark` for a write's
    /// use), the key's unseeded policy hash in the high 32 (so the drain need not hash
    /// the key again).
    @inlinable
    var buffer: UnsafeMutablePointer<UInt64> {
        (memory + Self.fields.bufferOffset).assumingMemoryBound(to: UInt64.self)
    }

    /// The stamps of the recorded reads (`LaneHeader.takeStamp()`), one for each read in
    /// `buffer`.
    @inlinable
    var stamps: UnsafeMutablePointer<UInt16> {
        (memory + Self.fields.stampsOffset).assumingMemoryBound(to: UInt16.self)
    }

    /// Records a read of the entry in `slot`, stamped by lane `header`, and returns how
    /// many reads the buffer now holds; 0 when it was full, and the read is dropped (and
    /// counted as such).
    @inlinable
    func record(_ slot: Int32, hash: UInt32, mark: UInt32 = 0, header: LaneHeader) -> Int {
        let count = buffered
        guard count < Self.bufferCapacity else {
            dropped &+= 1
            return 0
        }
        buffer[count] = UInt64(UInt32(bitPattern: slot) | mark) | UInt64(hash) << 32
        stamps[count] = header.takeStamp()
        buffered = count &+ 1
        return count &+ 1
    }

    /// Moves the recorded reads, oldest first, into `reads` and their stamps into `stamps`
    /// (each with room for `bufferCapacity`), and returns how many.
    @inlinable
    func takeReads(into reads: UnsafeMutablePointer<UInt64>, stamps: UnsafeMutablePointer<UInt16>) -> Int {
        let count = buffered
        reads.update(from: buffer, count: count)
        stamps.update(from: self.stamps, count: count)
        buffered = 0
        return count
    }
}
