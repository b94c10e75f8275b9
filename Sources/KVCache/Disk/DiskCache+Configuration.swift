import Foundation
#if Logging
import Logging
#endif
#if Metrics
import Metrics
#endif

extension DiskCache {
    /// Where values are kept.
    public enum StorageMode: String, Sendable, Hashable, CaseIterable {
        /// The largest value kept in a row, in any mode: half SQLite's length limit
        /// (500 MB by default), so that the key and extended data fit beside it.
        static let maxInlineSize = Database.lengthLimit / 2

        /// True if a value of `size` bytes goes to a file in this mode.
        func storesInFile(size: Int, inlineThreshold: Int) -> Bool {
            if size > Self.maxInlineSize { return true }
            switch self {
            case .inline: return false
            case .file: return true
            case .mixed: return size >= inlineThreshold
            }
        }

        /// Every value in its SQLite row, except values over half SQLite's length
        /// limit (500 MB by default), which SQLite cannot store: those go to files.
        case inline
        /// Every value in its own file; SQLite keeps only metadata.
        case file
        /// Values smaller than `inlineThreshold` in the row, larger ones in files.
        case mixed
    }

    /// How a disk cache stores, limits and commits. Every property has a documented default.
    public struct Configuration: Sendable {
        /// The default longest key, in UTF-8 bytes.
        public static let defaultMaxKeyLength = 4096

        /// Where values are kept. Default `.mixed`.
        public var storageMode: StorageMode = .mixed
        /// In `.mixed` mode, values of fewer bytes than this live in SQLite; others in files.
        /// Default 20 KB (20 × 1024), between the measured write and read crossovers.
        /// Values over half SQLite's length limit (500 MB by default) always go to files.
        public var inlineThreshold: Int = 20 * 1024
        /// Most entries kept. Default unlimited.
        public var countLimit: Int = .max
        /// Most value bytes kept. Default unlimited.
        public var sizeLimit: Int64 = .max
        /// Entries not accessed for this long are removed by the auto trim. Default nil: no limit.
        public var ageLimit: Duration?
        /// The auto trim removes entries while the disk has less free space than this. Default 0 (off).
        public var freeDiskSpaceLimit: Int64 = 0
        /// When over the count or size limit, trim down to `limit × lowWatermark`, so a
        /// full cache does not trim on every write. In (0, 1]; default 0.9.
        public var lowWatermark: Double = 0.9
        /// The time between automatic trims (expired entries, age, limits, free space);
        /// nil turns them off. Default 60 seconds.
        public var autoTrimInterval: Duration? = .seconds(60)
        /// Reading an entry stored with an ``Expiration/after(_:)`` expiration restarts its
        /// lifetime. Default false.
        public var extendsExpirationOnAccess = false
        /// Longest key in UTF-8 bytes; longer keys throw `KVCacheError.invalidKey`. Default 4096.
        public var maxKeyLength = Configuration.defaultMaxKeyLength
        /// Longest time a write waits in the group-commit transaction before it is
        /// committed (and survives a crash of this process). Default 2 ms.
        public var groupCommitDelay: Duration = .milliseconds(2)
        /// Writes per group commit before it commits at once. Default 512.
        public var groupCommitMaxWrites = 512
        /// The time between writes of buffered access times. Default 5 seconds.
        public var accessTimeFlushInterval: Duration = .seconds(5)
        /// A read records a new access time only if the stored one is at least this
        /// old, so repeated reads of a hot entry write nothing; LRU trims order
        /// entries to this resolution. Zero records every read. Default 60 seconds.
        public var accessTimeResolution: Duration = .seconds(60)
        /// How long to wait for another process's lock before throwing `KVCacheError.sqlite`
        /// with result code 5 (`SQLITE_BUSY`). Default 5 seconds.
        public var busyTimeout: Duration = .seconds(5)
        /// fsync each value file before its row is written, and the data folder on `flush()`.
        /// Default false: after a power loss a recent file value may be a miss, never wrong bytes.
        public var syncsFiles = false
        /// The orphan sweep at open and in the background leaves files younger than this:
        /// another process may be about to commit their rows. Default 60 seconds.
        public var orphanGracePeriod: Duration = .seconds(60)
        /// SQLite page size for a new store (an existing one keeps its own). Default 16384.
        public var pageSize: Int = 16384
        /// Opens an existing cache without ever changing it: reads record no access
        /// times and remove nothing, there are no trims or sweeps, a damaged manifest
        /// throws `KVCacheError.corrupt` instead of being rebuilt, and every call that
        /// would write throws `KVCacheError.readOnly`. For tools that inspect a cache.
        /// Default false.
        public var isReadOnly = false
        /// SQLite connections that serve reads, so that reads run beside each other and
        /// beside commits, checkpoints, trims and `verify`; each is opened on first use.
        /// From 1 to 64; default the number of active cores, at least 2.
        public var readConnections: Int = Configuration.defaultReadConnections

        /// The default `readConnections`: the active cores, at least 2 (at most 64).
        public static let defaultReadConnections = min(64, max(2, ProcessInfo.processInfo.activeProcessorCount))

        /// Called with the key and the reason for each entry this cache removed, once
        /// the commit that removed it has landed: trims (`.count`, `.cost`, `.expired`,
        /// `.pressure`), expired entries (`.expired`), replaced values (`.replaced`) and
        /// `removeValue`, `removeValues(withPrefix:)` and `removeAll` (`.removed`). Not for
        /// rows another process removed, nor broken rows `verify` drops, nor a value replaced
        /// or removed before its own group commit (it never reached the manifest). Calls run in order
        /// on a queue of their own, without the cache's locks; `waitForBackgroundWork()`
        /// waits for them. Default nil.
        public var onEviction: (@Sendable (_ key: String, _ reason: EvictionReason) -> Void)?

        #if Logging
        /// Where failures that reach no caller are logged (background trims and sweeps,
        /// a manifest rebuilt after corruption, a commit connection that could not be
        /// opened). Package trait `Logging`. Default nil: not logged.
        public var logger: Logger?
        #endif

        #if Metrics
        /// With a label, the cache's statistics are exported to swift-metrics (package
        /// trait `Metrics`): counters `kvcache_disk_hits`, `_misses`, `_sets`, `_commits`,
        /// `_failed_commits`, `_evictions` (dimension `reason`), gauges `kvcache_disk_entries`,
        /// `_bytes`, `_file_bytes`, and the timer `kvcache_disk_commit_duration`, each with
        /// the dimension `cache` = this label. Default nil: nothing is exported.
        public var metricsLabel: String?
        /// The time between exports (also on `reportMetrics()` and at close). Default 10 seconds.
        public var metricsInterval: Duration = .seconds(10)
        /// Where metrics go. Default nil: `MetricsSystem.factory`, the bootstrapped backend.
        public var metricsFactory: (any MetricsFactory)?
        #endif

        /// Where this configuration's failures without a caller go.
        var diagnostics: Diagnostics {
            #if Logging
            return Diagnostics(logger: logger)
            #else
            return .none
            #endif
        }

        /// The clock, in seconds since 1970; tests replace it.
        var clock: @Sendable () -> Double = KVStorage.wallClock

        /// How long expired entries are kept (read as misses) before they are removed: a
        /// ``Cache``'s fail-safe window (`Cache.FailSafe.maxStaleness`); zero otherwise.
        var expiredRetention: Duration = .zero

        /// A configuration with every property at its documented default; set the properties to
        /// change them.
        public init() {}

        func validate() throws {
            func check(_ condition: Bool, _ message: String) throws { try Validation.check(condition, message) }
            try check(inlineThreshold >= 0, "inlineThreshold must not be negative")
            try check(countLimit >= 0, "countLimit must not be negative")
            try check(sizeLimit >= 0, "sizeLimit must not be negative")
            try check(ageLimit.map { $0 >= .zero } ?? true, "ageLimit must not be negative")
            try check(freeDiskSpaceLimit >= 0, "freeDiskSpaceLimit must not be negative")
            try check(lowWatermark > 0 && lowWatermark <= 1, "lowWatermark must be in (0, 1]")
            try check(autoTrimInterval.map { $0 > .zero } ?? true, "autoTrimInterval must be positive")
            try check(maxKeyLength > 0, "maxKeyLength must be positive")
            try check(groupCommitDelay >= .zero, "groupCommitDelay must not be negative")
            try check(groupCommitMaxWrites > 0, "groupCommitMaxWrites must be positive")
            try check(accessTimeFlushInterval >= .zero, "accessTimeFlushInterval must not be negative")
            try check(accessTimeResolution >= .zero, "accessTimeResolution must not be negative")
            try check(busyTimeout >= .zero, "busyTimeout must not be negative")
            try check(orphanGracePeriod >= .zero, "orphanGracePeriod must not be negative")
            try check(readConnections >= 1 && readConnections <= 64, "readConnections must be from 1 to 64")
            #if Metrics
            try check(metricsInterval > .zero, "metricsInterval must be positive")
            #endif
            try check([512, 1024, 2048, 4096, 8192, 16384, 32768, 65536].contains(pageSize),
                      "pageSize must be a power of two from 512 to 65536")
        }

        var storageOptions: KVStorage.Options {
            var options = KVStorage.Options()
            options.mode = storageMode
            options.inlineThreshold = inlineThreshold
            options.maxKeyLength = maxKeyLength
            options.busyTimeout = busyTimeout.seconds
            options.groupCommitDelay = groupCommitDelay.seconds
            options.groupCommitMaxWrites = groupCommitMaxWrites
            options.syncsFiles = syncsFiles
            options.extendsExpirationOnAccess = extendsExpirationOnAccess
            options.expiredRetention = expiredRetention.seconds
            options.accessTimeResolution = accessTimeResolution.seconds
            options.pageSize = pageSize
            options.readOnly = isReadOnly
            options.readConnections = readConnections
            options.clock = clock
            options.onEviction = onEviction
            options.diagnostics = diagnostics
            return options
        }
    }
}
