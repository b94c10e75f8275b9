import Foundation

/// A memory cache's read lanes: for each lane, a `LaneStripe` per table stripe, in one
/// allocation that it owns. A thread reads on lane `ThreadNumber.current() % count`.
@usableFromInline
final class ReadLanes {
    /// The first lane's first stripe; lane `l`'s stripe `s` starts
    /// `l * laneStride + s * LaneStripe.byteCount` bytes later.
    @usableFromInline let base: UnsafeMutableRawPointer
    @usableFromInline let laneStride: Int
    @usableFromInline let count: Int
    @usableFromInline let stripeCount: Int

    /// `count` lanes for a table of `stripeCount` stripes.
    init(count: Int, stripeCount: Int, readsSkipCacheLock: Bool) {
        precondition(count > 0 && stripeCount > 0 && PThreadMutex.size <= 40)
        self.count = count
        self.stripeCount = stripeCount
        laneStride = stripeCount * LaneStripe.byteCount
        base = .allocate(byteCount: count * laneStride, alignment: LaneStripe.lineSize)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: count * laneStride)
        forEach { part in
            // Spins a little before sleeping: the lock is held for a look-up only.
            PThreadMutex.initialize(at: part.mutex, spins: true)
            part.readsSkipCacheLock = readsSkipCacheLock
        }
    }

    deinit {
        forEach { PThreadMutex.destroy(at: $0.mutex) }
        base.deallocate()
    }

    /// Lane `lane`'s part of stripe `stripe`.
    @inlinable
    subscript(lane lane: Int, stripe stripe: Int) -> LaneStripe {
        LaneStripe(memory: base + lane &* laneStride + stripe &* LaneStripe.byteCount)
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
