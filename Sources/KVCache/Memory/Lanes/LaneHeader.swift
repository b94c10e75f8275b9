import CProcessor

/// A read lane's own line, ahead of its stripes: the stripes whose read buffers hold
/// reads not yet drained into the policy, a bit each, and the stamp the lane's next
/// recorded read takes (a view of memory that `ReadLanes` owns). Atomic words:
/// readers write them holding only their stripe's lock, and a drain reads them under
/// the cache's lock.
@usableFromInline
struct LaneHeader {
    /// Bytes the header's words take.
    static var byteCount: Int { 2 * MemoryLayout<UInt64>.size }

    @usableFromInline let memory: UnsafeMutableRawPointer

    @inlinable
    init(memory: UnsafeMutableRawPointer) {
        self.memory = memory
    }

    @inlinable
    var pendingStripesWord: UnsafeMutablePointer<UInt64> { memory.assumingMemoryBound(to: UInt64.self) }

    /// The stripes whose buffers hold reads, a bit each.
    @inlinable
    var pendingStripes: UInt64 { kvcache_atomic_load(pendingStripesWord) }

    /// Marks stripe `stripe`'s buffer as holding reads (its first read since a drain).
    @inlinable
    func markPending(stripe: Int) {
        let bit: UInt64 = 1 << UInt64(stripe)
        // Loaded first: a load leaves the line shared where a write would take it.
        if kvcache_atomic_load(pendingStripesWord) & bit == 0 { kvcache_atomic_or(pendingStripesWord, bit) }
    }

    /// The stripes whose buffers hold reads, now cleared (the caller drains them).
    @inlinable
    func takePendingStripes() -> UInt64 {
        // Loaded first: usually nothing waits.
        guard kvcache_atomic_load(pendingStripesWord) != 0 else { return 0 }
        return kvcache_atomic_exchange(pendingStripesWord, 0)
    }

    @inlinable
    var stampWord: UnsafeMutablePointer<UInt64> { (memory + 8).assumingMemoryBound(to: UInt64.self) }

    /// The stamp of the lane's next recorded read, now taken: stamps follow the order in
    /// which the lane's reads were recorded, across its stripes, so that a drain replays
    /// them in that order. A load and a store, not an atomic increment: threads that share
    /// a lane may take the same stamp, which costs the order of their reads, never a read.
    @inlinable
    func takeStamp() -> UInt16 {
        let stamp = kvcache_atomic_load(stampWord)
        kvcache_atomic_store(stampWord, stamp &+ 1)
        return UInt16(truncatingIfNeeded: stamp)
    }

    /// The stamp the lane's next recorded read will take.
    @inlinable
    var nextStamp: UInt16 { UInt16(truncatingIfNeeded: kvcache_atomic_load(stampWord)) }
}
