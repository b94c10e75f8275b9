extension DiskCache {
    /// Counters since open, plus the store's current totals. The same words as the
    /// memory level's (`MemoryCache.Statistics`): hits, misses, sets, evictions by reason.
    public struct Statistics: Sendable, Hashable, CustomStringConvertible {
        /// Reads that found a live entry.
        public var hits = 0
        /// Reads that found nothing, or only an expired entry.
        public var misses = 0
        /// Values stored, including ones that replaced an earlier value.
        public var sets = 0
        /// Entries that left the store, by reason (every reason is present): trims,
        /// expiration, replacement; `.removed` counts the entries callers removed
        /// (`removeValue`, `removeValues`, `removeAll`).
        public var evictions: [EvictionReason: Int] = Dictionary(uniqueKeysWithValues: EvictionReason.allCases.map { ($0, 0) })
        /// Entries stored (expired ones not yet removed included).
        public var count = 0
        /// Bytes of all values.
        public var size: Int64 = 0
        /// Entries whose value lives in its manifest row.
        public var inlineCount = 0
        /// Bytes of the values in manifest rows.
        public var inlineSize: Int64 = 0
        /// Entries whose value lives in a file of its own.
        public var fileCount = 0
        /// Bytes of the values in files.
        public var fileSize: Int64 = 0
        /// Rows dropped because their file was missing or of the wrong size.
        public var brokenEntries = 0
        /// Times a corrupt manifest was moved aside and rebuilt.
        public var rebuilds = 0
        /// Group commits that landed.
        public var commits = 0
        /// Group commits that failed and were rolled back.
        public var failedCommits = 0

        /// Hits divided by reads; 0 before the first read.
        public var hitRatio: Double {
            hits + misses == 0 ? 0 : Double(hits) / Double(hits + misses)
        }

        /// Entries that left the store for any reason.
        public var totalEvictions: Int {
            evictions.values.reduce(0, +)
        }

        /// "12 entries, 34000 bytes (2 in files); 90 hits, 10 misses (90.0 %), 20 sets; evicted: 8 count".
        public var description: String {
            "\(count) \(count == 1 ? "entry" : "entries"), \(size) bytes (\(fileCount) in files); "
                + StatisticsText.reads(hits: hits, misses: misses, sets: sets)
                + StatisticsText.evictions(evictions)
                + (brokenEntries > 0 ? "; \(brokenEntries) broken" : "")
                + (failedCommits > 0 ? "; \(failedCommits) failed commits" : "")
                + (rebuilds > 0 ? "; rebuilt \(rebuilds)×" : "")
        }
    }

    /// A snapshot of the counters and totals, pending writes included. Read on the read
    /// path: it never commits and never waits for a commit, a trim or `verify`. If the
    /// store cannot be read (or is closed), the totals are those of the last commit.
    public var statistics: Statistics {
        let totals = (try? read { reader, _ in try reader.totals() })
            ?? reader.buffer.withLock { $0.committedTotals }
        return statistics(totals: totals)
    }

    /// This process's counters with the store's `totals` (read by the caller, as `inspect()`
    /// reads them in its own transaction).
    func statistics(totals: KVStorage.Totals) -> Statistics {
        let counters = reader.buffer.withLock { $0.counters }
        let reads = reader.pool.readCounts
        var statistics = Statistics()
        statistics.hits = counters.hits + reads.hits
        statistics.misses = counters.misses + reads.misses
        statistics.sets = counters.sets
        statistics.evictions.merge(counters.evictions, uniquingKeysWith: +)
        statistics.setTotals(totals)
        statistics.brokenEntries = counters.brokenRows
        statistics.rebuilds = counters.rebuilds
        statistics.commits = counters.commits
        statistics.failedCommits = counters.failedCommits
        return statistics
    }
}

extension DiskCache.Statistics {
    mutating func setTotals(_ totals: KVStorage.Totals) {
        count = totals.count
        size = totals.size
        fileCount = totals.fileCount
        fileSize = totals.fileSize
        inlineCount = totals.count - totals.fileCount
        inlineSize = totals.size - totals.fileSize
    }

}
