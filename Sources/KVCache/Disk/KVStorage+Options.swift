#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension KVStorage {
    /// How a store is opened; `DiskCache.Configuration` fills it in.
    struct Options: Sendable {
        var mode: DiskCache.StorageMode = .mixed
        var inlineThreshold = 20 * 1024
        var maxKeyLength = DiskCache.Configuration.defaultMaxKeyLength
        var busyTimeout = 5.0
        /// How long a write may stay pending before its group commit starts.
        var groupCommitDelay = 0.002
        var groupCommitMaxWrites = 512
        /// Inline bytes held in pending writes before they are committed (bounds memory and the WAL).
        var groupCommitMaxBytes = 4 << 20
        var syncsFiles = false
        var readOnly = false
        var extendsExpirationOnAccess = false
        /// Seconds an expired entry is kept before reads and sweeps remove it, so that a
        /// ``Cache``'s fail-safe can still serve it (see `Cache.FailSafe`); 0 otherwise.
        var expiredRetention = 0.0
        var accessBufferLimit = 1024
        var accessTimeResolution = 60.0
        /// Read connections of the pool (see ReadConnectionPool).
        var readConnections = 2
        /// 16 KiB: measured faster than SQLite's 4 KiB for every inline size and
        /// for trims (fewer pages per deleted row; see docs/BENCHMARKS.md).
        var pageSize = 16384
        var journalSizeLimit: Int64 = 4 << 20
        /// WAL bytes after which a background checkpoint starts (see WALCheckpointer).
        var walAutocheckpointBytes = 4 << 20
        var clock: @Sendable () -> Double = KVStorage.wallClock
        var onEviction: (@Sendable (String, EvictionReason) -> Void)?
        var diagnostics = Diagnostics.none
        /// Told each group commit's duration in nanoseconds (package trait `Metrics`).
        var recordCommit: (@Sendable (UInt64) -> Void)?
    }

    /// Wall-clock seconds since 1970 (clock_gettime: cheaper than `Date()`).
    static func wallClock() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
