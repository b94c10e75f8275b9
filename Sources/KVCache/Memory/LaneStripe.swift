import Foundation
import Synchronization

/// A read lane's part of one table stripe: the lock that the lane's readers of the
/// stripe take, the reads they recorded for the policy, and their hits and misses (a
/// view of memory that `ReadLanes` owns).
///
/// Under the adaptive policy a read hit takes only this lock, and each thread always
/// reads on the same lane (`ThreadNumber`), so threads on different lanes write no
/// memory in common: a hit costs the same with two threads as with one. A writer
/// holds the cache's lock and takes the stripe's lock in every lane to change that
/// stripe's table; readers of other stripes go on. Reads are recorded in a buffer
/// that the replaying lane (`ReadLanes`) replays later under the cache's lock, taken
/// with a try-lock (Caffeine's read buffers); a read recorded while the buffer is full
/// is dropped, which costs the policy precision, never a wrong value.
@usableFromInline
struct LaneStripe {
    /// Reads the buffer holds before the reader that fills it tries to replay them.
    @inlinable static var bufferCapacity: Int { 32 }
    @inlinable static var lineSize: Int { 64 }
    /// Bytes each takes: a line for the mutex and counters, then the buffer.
    @inlinable static var byteCount: Int { lineSize + bufferCapacity * MemoryLayout<UInt64>.size }

    /// The mutex (at most 40 bytes), the buffered reads' count and whether reads may
    /// skip the cache's lock (4 bytes each), hits and misses in one 64-byte line, then
    /// the buffer. No other lane's (or object's) data shares those lines.
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

    // Everything below is guarded by the lock.

    @inlinable
    var buffered: Int {
        get { Int((memory + 40).load(as: UInt32.self)) }
        nonmutating set { (memory + 40).storeBytes(of: UInt32(truncatingIfNeeded: newValue), as: UInt32.self) }
    }

    /// Whether reads may skip the cache's lock: false once some entry can expire or
    /// ages are tracked, since those reads need the entry's times (kept under the
    /// cache's lock). It never turns back on.
    @inlinable
    var readsSkipCacheLock: Bool {
        get { (memory + 44).load(as: UInt32.self) != 0 }
        nonmutating set { (memory + 44).storeBytes(of: newValue ? 1 : 0, as: UInt32.self) }
    }

    @inlinable
    var hits: Int {
        get { (memory + 48).load(as: Int.self) }
        nonmutating set { (memory + 48).storeBytes(of: newValue, as: Int.self) }
    }

    @inlinable
    var misses: Int {
        get { (memory + 56).load(as: Int.self) }
        nonmutating set { (memory + 56).storeBytes(of: newValue, as: Int.self) }
    }

    /// The recorded reads: the slot in the low 32 bits, the key's unseeded policy hash
    /// in the high 32 (so the replay need not hash the key again).
    @inlinable
    var buffer: UnsafeMutablePointer<UInt64> {
        (memory + Self.lineSize).assumingMemoryBound(to: UInt64.self)
    }

    /// Records a read of the entry in `slot`, marking the stripe's `bit` in `pending`
    /// when the buffer was empty; returns whether the buffer is now full. A read that
    /// finds the buffer full is dropped.
    @inlinable
    func record(_ slot: Int32, hash: UInt32, bit: UInt64, pending: borrowing Atomic<UInt64>) -> Bool {
        let count = buffered
        guard count < Self.bufferCapacity else { return true }
        // Loaded first: the bit is usually set already (bits are cleared only before a
        // write), and a load leaves the line shared where a write would take it.
        if count == 0, pending.load(ordering: .relaxed) & bit == 0 {
            pending.bitwiseOr(bit, ordering: .relaxed)
        }
        buffer[count] = UInt64(UInt32(bitPattern: slot)) | UInt64(hash) << 32
        buffered = count &+ 1
        return count &+ 1 == Self.bufferCapacity
    }

    /// Moves the recorded reads, oldest first, into `reads` (room for
    /// `bufferCapacity`) and returns how many.
    @inlinable
    func takeReads(into reads: UnsafeMutableBufferPointer<UInt64>) -> Int {
        let count = buffered
        for index in 0..<count { reads[index] = buffer[index] }
        buffered = 0
        return count
    }
}
