/// The facade's own counters: plain integers behind one short lock.
struct CacheCounters {
    var diskHits = 0
    var misses = 0
    var sets = 0
    var decodingFailures = 0
    var computations = 0
    var joinedLoads = 0
    var refreshes = 0
    var failedRefreshes = 0
    var discardedRefreshes = 0
    var failSafeServes = 0
    var remoteLeaseWaits = 0
    var remoteLeaseTimeouts = 0
    var remoteHits = 0
    var remoteErrors = 0
    var remoteValuesTooLarge = 0
    var remoteChanges = 0
    var remoteResynchronizations = 0
}

extension Cache {
    /// A snapshot of what a cache and each of its levels have done since it was opened.
    public struct Statistics: Sendable, Equatable, CustomStringConvertible {
        /// Reads answered by the memory level. This is the memory level's own hit
        /// count (counting there keeps a memory hit as cheap as on `MemoryCache`),
        /// so reads made directly through `memory` count too.
        public var memoryHits: Int
        /// Reads through the cache answered by the disk level (and promoted).
        public var diskHits: Int
        /// Reads through the cache answered by the remote level (and stored locally).
        public var remoteHits: Int
        /// Remote calls that failed (unreachable, slow, an error reply, bytes that do not
        /// decode); each read among them counted as a miss.
        public var remoteErrors: Int
        /// Values too large for the remote level, kept local only.
        public var remoteValuesTooLarge: Int
        /// Changes other nodes made that dropped local copies.
        public var remoteChanges: Int
        /// Times the local values were dropped (or kept, as configured) because the
        /// remote level may have missed changes (at open, and after a lost subscription).
        public var remoteResynchronizations: Int
        /// Reads through the cache that found nothing in any level. A
        /// `value(forKey:orCompute:)` call that joins a load already running is
        /// counted in `joinedLoads` instead.
        public var misses: Int
        /// Values stored through the cache (any `DiskWrite`), including computed ones.
        public var sets: Int
        /// Stored values that failed to decode.
        public var decodingFailures: Int
        /// Compute closures run by `value(forKey:orCompute:)`.
        public var computations: Int
        /// `value(forKey:orCompute:)` calls that missed, found the key's computation
        /// already running and got its result (or its error) without running their own.
        public var joinedLoads: Int
        /// `.background` disk writes that failed.
        public var failedBackgroundWrites: Int
        /// Background refreshes started by `value(forKey:expiration:refreshAfter:diskWrite:orCompute:)`.
        public var refreshes: Int
        /// Refreshes whose computation or write threw (the value they were to replace stays).
        public var failedRefreshes: Int
        /// Refreshes whose result was dropped because the entry changed (was replaced,
        /// removed or touched) while they computed.
        public var discardedRefreshes: Int
        /// Loads that served an expired value, marked stale, because the computation threw
        /// (or had thrown within `FailSafe.retryInterval`): see ``Cache/FailSafe``.
        public var failSafeServes: Int
        /// Loads that missed everywhere, found another node holding the key's remote lease
        /// (`Configuration.remoteLoadLease`) and waited for its value.
        public var remoteLeaseWaits: Int
        /// Such waits that ended without the other node's value (its lease expired or was
        /// released, or the wait lasted the lease's duration): the load computed itself.
        public var remoteLeaseTimeouts: Int
        /// The memory level's own counters, evictions and totals.
        public var memory: MemoryCache<String, Value>.Statistics
        /// The disk level's own counters, evictions, totals, files and inline rows.
        public var disk: DiskCache.Statistics
        /// The remote recovery queue's size now and what it did (see ``RemoteRecovery``);
        /// zeros without a remote level or with recovery off.
        public var remoteRecovery = RemoteRecovery.Statistics()

        /// Reads answered by any level.
        public var hits: Int { memoryHits + diskHits + remoteHits }

        /// The share of reads served without a computation of their own: hits and
        /// joined loads, divided by hits, joined loads and misses; 0 before the first read.
        /// (100 concurrent loads of one key served by one computation: 0.99.)
        public var hitRatio: Double {
            let served = hits + joinedLoads
            let reads = served + misses
            return reads == 0 ? 0 : Double(served) / Double(reads)
        }

        /// One line for the cache, then one for each level.
        public var description: String {
            let remotePart = remoteHits > 0 ? ", \(remoteHits) remote" : ""
            var line = "\(hits) \(hits == 1 ? "hit" : "hits") (\(memoryHits) memory, \(diskHits) disk\(remotePart)), "
                + "\(misses) \(misses == 1 ? "miss" : "misses")"
            if joinedLoads > 0 { line += ", \(joinedLoads) joined \(joinedLoads == 1 ? "load" : "loads")" }
            if hits + misses + joinedLoads > 0 { line += " (hit ratio " + StatisticsText.percent(hitRatio) + ")" }
            line += ", \(sets) \(sets == 1 ? "set" : "sets"), \(computations) "
                + (computations == 1 ? "computation" : "computations")
            if decodingFailures > 0 { line += ", \(decodingFailures) undecodable" }
            if failedBackgroundWrites > 0 { line += ", \(failedBackgroundWrites) failed background writes" }
            if remoteErrors > 0 { line += ", \(remoteErrors) remote errors" }
            if remoteValuesTooLarge > 0 { line += ", \(remoteValuesTooLarge) too large for the remote level" }
            if remoteChanges > 0 { line += ", \(remoteChanges) changed by other nodes" }
            if remoteRecovery.queued > 0 {
                line += ", remote recovery: \(remoteRecovery.pending) queued, \(remoteRecovery.replayed) replayed"
                if remoteRecovery.overflowDrops > 0 { line += ", \(remoteRecovery.overflowDrops) dropped (full)" }
            }
            if refreshes > 0 {
                line += ", \(refreshes) \(refreshes == 1 ? "refresh" : "refreshes")"
                if failedRefreshes > 0 { line += " (\(failedRefreshes) failed)" }
            }
            if failSafeServes > 0 { line += ", \(failSafeServes) stale (fail-safe)" }
            if remoteLeaseWaits > 0 {
                line += ", \(remoteLeaseWaits) waited for another node (\(remoteLeaseTimeouts) in vain)"
            }
            return line + "\nmemory: \(memory)\ndisk: \(disk)"
        }
    }

    /// A snapshot of the cache's counters and both levels' statistics.
    public var statistics: Statistics {
        let counters = counters.withLock { $0 }
        let memory = memory.statistics
        var statistics = Statistics(
            memoryHits: memory.hits, diskHits: counters.diskHits, remoteHits: counters.remoteHits,
            remoteErrors: counters.remoteErrors, remoteValuesTooLarge: counters.remoteValuesTooLarge,
            remoteChanges: counters.remoteChanges, remoteResynchronizations: counters.remoteResynchronizations,
            misses: counters.misses,
            sets: counters.sets, decodingFailures: counters.decodingFailures,
            computations: counters.computations, joinedLoads: counters.joinedLoads,
            failedBackgroundWrites: writes.failureCount, refreshes: counters.refreshes,
            failedRefreshes: counters.failedRefreshes, discardedRefreshes: counters.discardedRefreshes,
            failSafeServes: counters.failSafeServes, remoteLeaseWaits: counters.remoteLeaseWaits,
            remoteLeaseTimeouts: counters.remoteLeaseTimeouts, memory: memory, disk: disk.statistics)
        if let remoteRecovery { statistics.remoteRecovery = remoteRecovery.counts }
        return statistics
    }
}
