import CProcessor

/// What a cache that measures its serialized sections counted, under the cache's lock.
@usableFromInline
struct SerialSectionCounters {
    @usableFromInline var drains = 0
    @usableFromInline var drainNanoseconds = 0
    @usableFromInline var lockedSets = 0
    @usableFromInline var lockedSetNanoseconds = 0
    @usableFromInline var lockedSetWaitNanoseconds = 0

    @inlinable
    init() {}

    /// A drain that began at `start` ends now.
    @inlinable
    mutating func recordDrain(start: UInt64) {
        drains &+= 1
        drainNanoseconds &+= Int(truncatingIfNeeded: kvcache_monotonic_nanoseconds() &- start)
    }

    /// A set that asked for the cache's lock at `start` and got it at `locked` ends now.
    @inlinable
    mutating func recordLockedSet(start: UInt64, locked: UInt64) {
        lockedSets &+= 1
        lockedSetWaitNanoseconds &+= Int(truncatingIfNeeded: locked &- start)
        lockedSetNanoseconds &+= Int(truncatingIfNeeded: kvcache_monotonic_nanoseconds() &- locked)
    }
}

extension MemoryCache {
    /// Where a cache's threads ran one at a time, and waited, so far: what caps its
    /// throughput on more cores than a benchmark has. Sections and readers' waits are
    /// timed only by a cache created with `init(configuration:measuringSerialSections:)`;
    /// hits, in-place sets and dropped uses are always counted.
    @_spi(Benchmarks)
    public struct SerialSections: Sendable, Equatable {
        /// Drains of read buffers into the policy, under the cache's lock, and their time.
        public var drains = 0
        public var drainNanoseconds = 0
        /// Sets under the cache's lock (new keys, changed costs, expirations), the time
        /// they held it and the time they waited for it.
        public var lockedSets = 0
        public var lockedSetNanoseconds = 0
        public var lockedSetWaitNanoseconds = 0
        /// Sets that replaced a value in place, and the time they held (or waited for)
        /// their stripe's write lock.
        public var inPlaceSets = 0
        public var inPlaceSetNanoseconds = 0
        /// Reads that found their lane's lock busy, and the time they waited.
        public var readWaits = 0
        public var readWaitNanoseconds = 0
        /// Hits, and hits and in-place sets whose use the policy never saw.
        public var hits = 0
        public var droppedUses = 0
    }

    /// The serialized sections and waits so far (see `SerialSections`).
    @_spi(Benchmarks)
    public var serialSections: SerialSections {
        mutex.lock()
        defer { mutex.unlock() }
        let counted = serialSectionCounters
        var sections = SerialSections(
            drains: counted.drains, drainNanoseconds: counted.drainNanoseconds, lockedSets: counted.lockedSets,
            lockedSetNanoseconds: counted.lockedSetNanoseconds, lockedSetWaitNanoseconds: counted.lockedSetWaitNanoseconds,
            hits: counters.hits)
        guard storage.isStriped else { return sections }
        storage.lanes.forEach { part in
            part.lock()
            sections.inPlaceSets &+= part.replacements
            sections.inPlaceSetNanoseconds &+= part.writeNanoseconds
            sections.readWaits &+= part.waits
            sections.readWaitNanoseconds &+= part.waitNanoseconds
            sections.hits &+= part.hits
            sections.droppedUses &+= part.dropped
            part.unlock()
        }
        return sections
    }
}
