import Synchronization

/// The facade's own counters, each an atomic integer: a read path counts without a lock.
final class CacheCounters: Sendable {
    let diskHits = Atomic<Int>(0)
    let misses = Atomic<Int>(0)
    let sets = Atomic<Int>(0)
    let decodingFailures = Atomic<Int>(0)
    let computations = Atomic<Int>(0)
    let joinedLoads = Atomic<Int>(0)
    let refreshes = Atomic<Int>(0)
    let failedRefreshes = Atomic<Int>(0)
    let discardedRefreshes = Atomic<Int>(0)
    let failSafeServes = Atomic<Int>(0)
    let remoteLeaseWaits = Atomic<Int>(0)
    let remoteLeaseTimeouts = Atomic<Int>(0)
    let remoteHits = Atomic<Int>(0)
    let remoteErrors = Atomic<Int>(0)
    let remoteValuesTooLarge = Atomic<Int>(0)
    let remoteChanges = Atomic<Int>(0)
    let remoteResynchronizations = Atomic<Int>(0)
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
        let memory = memory.statistics
        func load(_ counter: borrowing Atomic<Int>) -> Int { counter.load(ordering: .relaxed) }
        var statistics = Statistics(
            memoryHits: memory.hits, diskHits: load(counters.diskHits), remoteHits: load(counters.remoteHits),
            remoteErrors: load(counters.remoteErrors), remoteValuesTooLarge: load(counters.remoteValuesTooLarge),
            remoteChanges: load(counters.remoteChanges), remoteResynchronizations: load(counters.remoteResynchronizations),
            misses: load(counters.misses),
            sets: load(counters.sets), decodingFailures: load(counters.decodingFailures),
            computations: load(counters.computations), joinedLoads: load(counters.joinedLoads),
            failedBackgroundWrites: writes.failureCount, refreshes: load(counters.refreshes),
            failedRefreshes: load(counters.failedRefreshes), discardedRefreshes: load(counters.discardedRefreshes),
            failSafeServes: load(counters.failSafeServes), remoteLeaseWaits: load(counters.remoteLeaseWaits),
            remoteLeaseTimeouts: load(counters.remoteLeaseTimeouts), memory: memory, disk: disk.statistics)
        if let remoteRecovery { statistics.remoteRecovery = remoteRecovery.counts }
        return statistics
    }
}
