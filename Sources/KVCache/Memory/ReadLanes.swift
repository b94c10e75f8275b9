import CProcessor
import Foundation

/// A memory cache's read lanes: for each lane, a `LaneHeader` and a `LaneStripe` per
/// table stripe, after a line for the replayer's lane, in one allocation that it owns.
/// A thread reads on lane `ThreadNumber.current() % count`.
///
/// One lane at a time replays the reads: the replayer replays its own buffers as they
/// fill and, with them, the buffers other lanes filled and left to it. The policy's
/// lines (links, sketch) then stay in one core's cache, where two replaying cores
/// would pass them back and forth on every replay.
@usableFromInline
final class ReadLanes {
    /// The first lane's first stripe; lane `l`'s stripe `s` starts
    /// `l * laneStride + s * LaneStripe.byteCount` bytes later, its header a line before
    /// its first stripe.
    @usableFromInline let base: UnsafeMutableRawPointer
    /// The allocation: the replayer's line, then each lane's header and stripes.
    @usableFromInline let memory: UnsafeMutableRawPointer
    @usableFromInline let laneStride: Int
    @usableFromInline let count: Int
    @usableFromInline let stripeCount: Int

    /// `count` lanes for a table of `stripeCount` stripes.
    init(count: Int, stripeCount: Int, readsSkipCacheLock: Bool) {
        precondition(count > 0 && stripeCount > 0 && PThreadMutex.size <= 40)
        self.count = count
        self.stripeCount = stripeCount
        laneStride = LaneStripe.lineSize + stripeCount * LaneStripe.byteCount
        let byteCount = LaneStripe.lineSize + count * laneStride
        memory = .allocate(byteCount: byteCount, alignment: LaneStripe.lineSize)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        base = memory + 2 * LaneStripe.lineSize
        forEach { part in
            // Spins a little before sleeping: the lock is held for a look-up only.
            PThreadMutex.initialize(at: part.mutex, spins: true)
            part.readsSkipCacheLock = readsSkipCacheLock
        }
    }

    deinit {
        forEach { PThreadMutex.destroy(at: $0.mutex) }
        memory.deallocate()
    }

    /// Lane `lane`'s part of stripe `stripe`.
    @inlinable
    subscript(lane lane: Int, stripe stripe: Int) -> LaneStripe {
        LaneStripe(memory: base + lane &* laneStride + stripe &* LaneStripe.byteCount)
    }

    /// Lane `lane`'s header.
    @inlinable
    func header(lane: Int) -> LaneHeader {
        LaneHeader(memory: base + lane &* laneStride - LaneStripe.lineSize)
    }

    /// The lane that replays reads, plus one; 0 until a lane's buffer first fills.
    @inlinable
    var replayer: Int {
        get { Int(kvcache_atomic_load(memory.assumingMemoryBound(to: UInt64.self))) }
        set { kvcache_atomic_store(memory.assumingMemoryBound(to: UInt64.self), UInt64(newValue)) }
    }

    /// Whether lane `lane`, whose buffer of stripe `stripe` is full, replays now: it is
    /// the replayer, or takes the role (no lane has it, or the replayer left this lane's
    /// buffers full too long). Otherwise the buffer is left for the replayer.
    @inlinable
    func mayReplay(lane: Int, stripe: Int) -> Bool {
        let holder = replayer
        if holder == lane &+ 1 { return true }
        let header = header(lane: lane)
        if holder != 0, !header.leaveFull(stripe: stripe) { return false }
        header.clear()
        replayer = lane &+ 1
        return true
    }

    /// Buffers the replayer replays before it hands the role on to a lane whose full
    /// buffers it replayed, so that the lanes that read take turns and each does its
    /// share of the replay. Long enough that the policy's lines move between cores
    /// rarely (a turn is 2,048 reads).
    @inlinable static var buffersPerTurn: Int { 64 }

    /// Buffers replayed in this turn. Guarded by the cache's lock.
    @usableFromInline @exclusivity(unchecked) var turnBuffers = 0

    /// Counts the `buffers` that lane `lane`, the replayer, replayed, among them full
    /// buffers of the lanes in `waiting` (a bit each); at the end of its turn it hands
    /// the role to the next of those after it. Called with the cache's lock held.
    @inlinable
    func endReplay(by lane: Int, buffers: Int, waiting: UInt64) {
        turnBuffers &+= buffers
        guard turnBuffers >= Self.buffersPerTurn, waiting != 0 else { return }
        turnBuffers = 0
        for step in 1..<count {
            let next = (lane &+ step) % count
            if waiting & 1 << UInt64(next) != 0 {
                replayer = next &+ 1
                return
            }
        }
    }

    /// Calls `body` with every lane's part of every stripe, stripe by stripe.
    @inlinable
    func forEach(_ body: (LaneStripe) -> Void) {
        for stripe in 0..<stripeCount {
            for lane in 0..<count { body(self[lane: lane, stripe: stripe]) }
        }
    }

    /// Takes stripe `stripe`'s lock in every lane, in order (writers, who hold the
    /// cache's lock, do so before they change that stripe's table).
    @inlinable
    func lockStripe(_ stripe: Int) {
        for lane in 0..<count { self[lane: lane, stripe: stripe].lock() }
    }

    @inlinable
    func unlockStripe(_ stripe: Int) {
        for lane in 0..<count { self[lane: lane, stripe: stripe].unlock() }
    }

    /// Lanes for a table with stripes: one per processor, as a power of two, at most 8.
    /// More lanes let more threads read without sharing a lane; each costs a writer a
    /// lock, and memory (5 KB with 16 stripes).
    static var countForStripedTable: Int {
        let processors = Swift.min(Swift.max(ProcessInfo.processInfo.activeProcessorCount, 1), 8)
        return 1 << (Int.bitWidth - (processors - 1).leadingZeroBitCount)
    }
}
