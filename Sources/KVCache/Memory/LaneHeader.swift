import CProcessor

/// A read lane's own line, ahead of its stripes: the stripes whose read buffers the
/// lane filled and left for the replaying lane (`ReadLanes.replayer`), and how many
/// reads filled one of its buffers or found it full since the replayer last emptied one (a view of
/// memory that `ReadLanes` owns). Atomic words: readers write them without a lock.
@usableFromInline
struct LaneHeader {
    /// Reads that may find the lane's buffers full, the replayer not emptying them,
    /// before the lane takes the replayer's role: a replayer that stopped reading does
    /// not leave the other lanes' reads unrecorded for long. Twice a buffer: a replayer
    /// that reads empties the buffers long before.
    @inlinable static var dropsBeforeTakeOver: UInt64 { 2 * UInt64(LaneStripe.bufferCapacity) }

    /// The full-stripes word, then the drops word.
    @usableFromInline let memory: UnsafeMutableRawPointer

    @inlinable
    init(memory: UnsafeMutableRawPointer) {
        self.memory = memory
    }

    @inlinable
    var fullStripesWord: UnsafeMutablePointer<UInt64> { memory.assumingMemoryBound(to: UInt64.self) }

    @inlinable
    var dropsWord: UnsafeMutablePointer<UInt64> { (memory + 8).assumingMemoryBound(to: UInt64.self) }

    /// The stripes whose buffers wait for the replayer, a bit each.
    @inlinable
    var fullStripes: UInt64 { kvcache_atomic_load(fullStripesWord) }

    /// Marks stripe `stripe`'s buffer full, for the replayer, and counts the read that
    /// filled it or found it full; returns whether the lane should take the replayer's role.
    @inlinable
    func leaveFull(stripe: Int) -> Bool {
        let bit: UInt64 = 1 << UInt64(stripe)
        // Loaded first: while the buffer waits, each read of its stripe comes here.
        if kvcache_atomic_load(fullStripesWord) & bit == 0 { kvcache_atomic_or(fullStripesWord, bit) }
        return kvcache_atomic_add(dropsWord, 1) &+ 1 >= Self.dropsBeforeTakeOver
    }

    /// The stripes whose buffers wait, now cleared, with the count of drops (the
    /// replayer is about to empty them).
    @inlinable
    func takeFullStripes() -> UInt64 {
        // Loaded first: the line is the lane's, and usually nothing waits.
        guard kvcache_atomic_load(fullStripesWord) != 0 else { return 0 }
        kvcache_atomic_store(dropsWord, 0)
        return kvcache_atomic_exchange(fullStripesWord, 0)
    }

    /// Clears the marks of `stripes` (a bit each), whose buffers a writer has just
    /// emptied: the replayer then neither replays them again nor counts the lane as
    /// reading when it hands the role on.
    @inlinable
    func forget(stripes: UInt64) {
        // Loaded first: usually none of them is marked.
        if kvcache_atomic_load(fullStripesWord) & stripes != 0 { kvcache_atomic_and(fullStripesWord, ~stripes) }
    }

    /// Clears the marks and drops (the lane takes the replayer's role, and replays its
    /// own buffers as they fill).
    @inlinable
    func clear() {
        kvcache_atomic_store(dropsWord, 0)
        kvcache_atomic_store(fullStripesWord, 0)
    }
}
