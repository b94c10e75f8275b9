import CProcessor
import Foundation

/// A memory cache's read lanes: for each lane, a `LaneHeader` and a `LaneStripe` per
/// table stripe, in one allocation that it owns, laid out by `LaneLayout`. A thread
/// reads on lane `ThreadNumber.current() % count`.
///
/// Each lane drains its own buffers into the policy, under the cache's lock taken with
/// a try-lock, so no read waits for another lane's drain and no single thread replays
/// every lane's reads.
@usableFromInline
final class ReadLanes {
    /// The first lane's first stripe; lane `l`'s stripe `s` starts
    /// `l * laneStride + s * stripeStride` bytes later, its header `headerStride` before
    /// its first stripe.
    @usableFromInline let base: UnsafeMutableRawPointer
    @usableFromInline let memory: UnsafeMutableRawPointer
    @usableFromInline let laneStride: Int
    @usableFromInline let stripeStride: Int
    @usableFromInline let headerStride: Int
    @usableFromInline let count: Int
    @usableFromInline let stripeCount: Int
    /// The lanes a reader has used, a bit each, on a line of its own that only a lane's
    /// first reader writes: a grace period waits for readers of these lanes only, so its
    /// cost follows the threads that read, not the lanes there are.
    @usableFromInline let usedLanesWord: UnsafeMutablePointer<UInt64>
    /// Where a drain orders a lane's reads, made by the first drain that needs it (a
    /// cache that only carries entries away never does). Guarded by the cache's lock.
    @usableFromInline var stampOrder: StampOrder?
    /// `count` lanes (at most 64) for a table of `stripeCount` stripes.
    init(count: Int, stripeCount: Int, readsSkipCacheLock: Bool, layout: LaneLayout = .platform) {
        precondition(count > 0 && count <= UInt64.bitWidth && stripeCount > 0 && stripeCount <= UInt64.bitWidth)
        self.count = count
        self.stripeCount = stripeCount
        stripeStride = layout.stripeStride
        headerStride = layout.headerStride
        laneStride = layout.laneStride(stripes: stripeCount)
        let byteCount = count * laneStride
        memory = .allocate(byteCount: byteCount, alignment: layout.alignment)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        base = memory + headerStride
        usedLanesWord = UnsafeMutableRawPointer.allocate(byteCount: layout.alignment, alignment: layout.alignment)
            .initializeMemory(as: UInt64.self, repeating: 0, count: 1)
        forEach { part in
            // Spins a little before sleeping: the lock is held for a look-up only.
            PThreadMutex.initialize(at: part.mutex, spins: true)
            part.readsSkipCacheLock = readsSkipCacheLock
        }
    }

    deinit {
        forEach { PThreadMutex.destroy(at: $0.mutex) }
        memory.deallocate()
        usedLanesWord.deallocate()
        stampOrder?.deallocate()
    }

    /// `stampOrder`, made if needed. Called with the cache's lock held.
    @usableFromInline
    func orderingSpace() -> StampOrder {
        if let stampOrder { return stampOrder }
        let made = StampOrder(capacity: stripeCount * LaneStripe.bufferCapacity)
        stampOrder = made
        return made
    }

    /// The lanes a reader has used, a bit each.
    var usedLanes: UInt64 { kvcache_atomic_load(usedLanesWord) }

    /// Marks lane `lane` as used, before its first reader looks anything up. Called by
    /// every thread that takes a lane's lock to read the table, before it takes it.
    @inlinable
    func register(lane: Int) {
        let bit: UInt64 = 1 << UInt64(lane)
        // Loaded first: once every reading thread's lane is marked, the line stays shared.
        guard kvcache_atomic_load(usedLanesWord) & bit == 0 else { return }
        kvcache_atomic_or(usedLanesWord, bit)
        // The mark is visible before this reader loads a chain: a grace period that does
        // not see it began after the reader's look-up could have found an unlinked node.
        kvcache_full_fence()
    }

    /// Lane `lane`'s part of stripe `stripe`.
    @inlinable
    subscript(lane lane: Int, stripe stripe: Int) -> LaneStripe {
        LaneStripe(memory: base + lane &* laneStride + stripe &* stripeStride)
    }

    /// Lane `lane`'s header.
    @inlinable
    func header(lane: Int) -> LaneHeader {
        LaneHeader(memory: base + lane &* laneStride - headerStride)
    }

    /// Calls `body` with every lane's part of every stripe, stripe by stripe.
    @inlinable
    func forEach(_ body: (LaneStripe) -> Void) {
        for stripe in 0..<stripeCount {
            for lane in 0..<count { body(self[lane: lane, stripe: stripe]) }
        }
    }

    /// Takes stripe `stripe`'s lock in every lane, in lane order: no reader of the
    /// stripe runs until `unlockStripe` (tests, and checks that read every buffer).
    @inlinable
    func lockStripe(_ stripe: Int) {
        for lane in 0..<count { self[lane: lane, stripe: stripe].lock() }
    }

    @inlinable
    func unlockStripe(_ stripe: Int) {
        for lane in 0..<count { self[lane: lane, stripe: stripe].unlock() }
    }

    /// Waits until every reader of stripe `stripe` that started before the call has
    /// finished (a grace period): takes and releases the stripe's lock in each lane a
    /// reader has used.
    /// Table nodes unlinked before the call may then be freed. Called holding no lane's lock.
    @inlinable
    func synchronize(stripe: Int) {
        // The unlinking is visible before the lanes are read (`register(lane:)`'s fence is
        // the other half): a lane marked after this load has a reader that cannot find
        // the unlinked nodes.
        kvcache_full_fence()
        forEachUsedLane { lane in
            let part = self[lane: lane, stripe: stripe]
            part.lock()
            part.unlock()
        }
    }

    /// Calls `body` with each lane a reader has used, in lane order. Only these lanes can
    /// hold readers or buffered reads (`LRUStorage.laneViolations()` checks the reads).
    @inlinable
    func forEachUsedLane(_ body: (Int) -> Void) {
        var used = kvcache_atomic_load(usedLanesWord)
        while used != 0 {
            body(used.trailingZeroBitCount)
            used &= used &- 1
        }
    }

    /// Lanes for a table with stripes: four per processor, as a power of two, at most 64.
    /// Threads on different lanes share no lock on a hit. Servers run more threads than
    /// cores, and a thread preempted while it holds its lane's lock holds up the threads
    /// that share its lane: more lanes than cores keep that rare. A lane costs memory
    /// (`LaneLayout.laneStride`, about 7 KB with 16 stripes) and a lock and unlock in each
    /// grace period.
    static var countForStripedTable: Int {
        let processors = Swift.max(ProcessInfo.processInfo.activeProcessorCount, 1)
        let wanted = Swift.min(processors * lanesPerProcessor, UInt64.bitWidth)
        return 1 << (Int.bitWidth - (wanted - 1).leadingZeroBitCount)
    }

    /// Lanes per processor (`countForStripedTable`).
    static let lanesPerProcessor = 4
}
