import CProcessor

/// A read lane's own line, ahead of its stripes: the stripes whose read buffers hold
/// reads not yet drained into the policy, a bit each (a view of memory that
/// `ReadLanes` owns). An atomic word: readers set bits holding only their stripe's
/// lock, and a drain clears them under the cache's lock.
@usableFromInline
struct LaneHeader {
    /// Bytes the header's words take.
    static var byteCount: Int { MemoryLayout<UInt64>.size }

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
}
