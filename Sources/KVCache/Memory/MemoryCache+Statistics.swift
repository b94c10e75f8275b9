extension MemoryCache {
    /// A snapshot of what a memory cache has done since it was created. The same
    /// words as the disk level's (`DiskCache.Statistics`): hits, misses, sets,
    /// evictions by reason.
    public struct Statistics: Sendable, Hashable, CustomStringConvertible {
        /// Reads that found a live entry.
        public var hits: Int
        /// Reads that found nothing, or only an expired entry.
        public var misses: Int
        /// Values stored, including ones that replaced an earlier value.
        public var sets: Int
        /// Entries that left the cache, by reason (every reason is present);
        /// `.removed` counts the entries callers removed (`removeValue`, `removeValues`,
        /// `removeAll`).
        public var evictions: [EvictionReason: Int]
        /// Entries in the cache when the snapshot was taken.
        public var count: Int
        /// Total cost of the entries when the snapshot was taken.
        public var totalCost: Int64
        /// Hits the eviction policy did not see: with several threads reading, a hit
        /// that finds its thread's read buffer full while another thread drains is
        /// dropped rather than waited for (the adaptive policy samples reads, as
        /// Caffeine's does). 0 with one thread.
        public var droppedReads: Int = 0

        /// Hits divided by reads; 0 before the first read.
        public var hitRatio: Double {
            let reads = hits + misses
            return reads == 0 ? 0 : Double(hits) / Double(reads)
        }

        /// Entries that left the cache for any reason.
        public var totalEvictions: Int {
            evictions.values.reduce(0, +)
        }

        /// "12 entries, cost 3400; 90 hits, 10 misses (90.0 %), 20 sets; evicted: 8 count, 2 removed".
        public var description: String {
            "\(count) \(count == 1 ? "entry" : "entries"), cost \(totalCost); "
                + StatisticsText.reads(hits: hits, misses: misses, sets: sets)
                + StatisticsText.evictions(evictions)
        }
    }
}

/// The counters behind ``MemoryCache/Statistics``: plain integers, updated
/// under the cache's lock, so counting costs an add.
@usableFromInline
struct MemoryCacheCounters {
    @usableFromInline var hits = 0
    @usableFromInline var misses = 0
    @usableFromInline var sets = 0
    @usableFromInline var evictedByCount = 0
    @usableFromInline var evictedByCost = 0
    @usableFromInline var expired = 0
    @usableFromInline var removed = 0
    @usableFromInline var replaced = 0
    @usableFromInline var evictedByPressure = 0

    @usableFromInline
    init() {}

    @inlinable
    mutating func recordEviction(_ reason: EvictionReason) {
        switch reason {
        case .count: evictedByCount &+= 1
        case .cost: evictedByCost &+= 1
        case .expired: expired &+= 1
        case .removed: removed &+= 1
        case .replaced: replaced &+= 1
        case .pressure: evictedByPressure &+= 1
        }
    }

    var evictions: [EvictionReason: Int] {
        [
            .count: evictedByCount, .cost: evictedByCost, .expired: expired,
            .removed: removed, .replaced: replaced, .pressure: evictedByPressure,
        ]
    }
}
