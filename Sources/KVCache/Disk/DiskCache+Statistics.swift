extension DiskCache {
    /// Counters since open, plus the store's current totals.
    public struct Statistics: Sendable, Equatable {
        public var hits = 0
        public var misses = 0
        public var sets = 0
        /// Explicit `removeValue(forKey:)` calls that removed an entry.
        public var removals = 0
        /// Entries removed by trims, expiration, replacement and removeAll, by reason.
        public var evictions: [EvictionReason: Int] = [:]
        public var count = 0
        public var size: Int64 = 0
        public var inlineCount = 0
        public var inlineSize: Int64 = 0
        public var fileCount = 0
        public var fileSize: Int64 = 0
        /// Rows dropped because their file was missing or of the wrong size.
        public var brokenEntries = 0
        /// Times a corrupt manifest was moved aside and rebuilt.
        public var rebuilds = 0
        /// Group commits, and those that failed and were rolled back.
        public var commits = 0
        public var failedCommits = 0

        public var hitRatio: Double {
            hits + misses == 0 ? 0 : Double(hits) / Double(hits + misses)
        }
    }

    /// A snapshot of the counters and totals, pending writes included. Read on the read
    /// path: it never commits and never waits for a commit, a trim or `verify`. If the
    /// store cannot be read (or is closed), the totals are those of the last commit.
    public var statistics: Statistics {
        let totals = (try? read { reader, _ in try reader.totals() })
            ?? reader.buffer.withLock { $0.committedTotals }
        let counters = reader.buffer.withLock { $0.counters }
        let reads = reader.pool.readCounts
        var statistics = Statistics()
        statistics.hits = counters.hits + reads.hits
        statistics.misses = counters.misses + reads.misses
        statistics.sets = counters.sets
        statistics.removals = counters.removals
        statistics.evictions = counters.evictions
        statistics.setTotals(totals)
        statistics.brokenEntries = counters.brokenRows
        statistics.rebuilds = counters.rebuilds
        statistics.commits = counters.commits
        statistics.failedCommits = counters.failedCommits
        return statistics
    }
}

/// A report that shows the store's totals (`Statistics`, `Inspection`): one mapping for both.
protocol ReportsTotals {
    var count: Int { get set }
    var size: Int64 { get set }
    var fileCount: Int { get set }
    var fileSize: Int64 { get set }
    var inlineCount: Int { get set }
    var inlineSize: Int64 { get set }
}

extension ReportsTotals {
    mutating func setTotals(_ totals: KVStorage.Totals) {
        count = totals.count
        size = totals.size
        fileCount = totals.fileCount
        fileSize = totals.fileSize
        inlineCount = totals.count - totals.fileCount
        inlineSize = totals.size - totals.fileSize
    }
}

extension DiskCache.Statistics: ReportsTotals {}
extension DiskCache.Inspection: ReportsTotals {}
