import Foundation
#if Tracing
import Tracing
#endif

extension Cache {
    /// How a two-level cache configures its levels and weighs its values.
    public struct Configuration: Sendable {
        /// The memory level. Default: `MemoryCache.Configuration()` (no limits).
        /// Its keys are compared by their UTF-8 bytes all the same (see ``Cache``);
        /// `onEviction` receives each key as it was stored.
        public var memory: MemoryCache<String, Value>.Configuration

        /// The disk level. Default: `DiskCache.Configuration()` (no limits, mixed storage).
        public var disk: DiskCache.Configuration

        /// The cost of a value in the memory level. Default `nil`: the size of
        /// its encoding in bytes (computed anyway for the disk write; a
        /// memory-only write of a value encodes it just to weigh it).
        public var cost: (@Sendable (Value) -> Int64)?

        /// Whether a stored value that fails to decode is removed when it is
        /// found, so the next read is a plain miss. Default: `true`.
        public var removesUndecodableValues: Bool

        /// A monitor that trims the memory level under memory pressure. Default `nil`.
        /// Enable with `configuration.memoryPressureMonitor = .shared` and, once per
        /// process, `try MemoryPressureMonitor.shared.start()`.
        public var memoryPressureMonitor: MemoryPressureMonitor?

        /// A level shared with other processes or machines, read after the disk level and
        /// written after it (the `KVCacheRedis` product's `RedisLevel`, say). Default `nil`.
        /// The cache subscribes to its changes when opened and stops at `close()`. Give each
        /// cache its own remote level.
        public var remote: (any RemoteLevel)?

        /// When writes and removals reach the remote level. Default `.immediate`.
        public var remoteWrite: RemoteWrite = .immediate

        /// How remote writes, removals and touches that could not reach the remote level are
        /// queued and replayed once it answers again (see ``RemoteRecovery``). Default:
        /// at most 10,000 operations and 64 MiB, tried every 100 ms. `.off` turns it off.
        public var remoteRecovery = RemoteRecovery()

        /// What the cache drops when its remote level says changes may have been missed:
        /// when the cache subscribes at open, and again whenever the subscription was lost.
        /// Default `.localValues`: memory and disk, so no value another node changed meanwhile
        /// is served from here.
        public var remoteResynchronization: RemoteResynchronization = .localValues

        /// A distributed single flight: with a remote level, a load that misses in every level
        /// takes a lease on the key in the remote level for this long, so one node computes
        /// and the others wait for its value (until the lease ends: then they take it, or
        /// compute). More than zero and at most an hour; set it above the longest
        /// computation. Default nil: every node that misses computes. Ignored without
        /// `remote`; a remote level without leases lets every node compute.
        public var remoteLoadLease: Duration?

        /// Fail-safe: how long past their expiration values are kept on disk and served, marked
        /// stale, by `value(forKey:…orCompute:)` and `result(forKey:…orCompute:)` when the
        /// computation throws (see ``FailSafe``). Default nil: off, and expired values go as
        /// soon as a read or a trim finds them.
        public var failSafe: FailSafe?

        #if Tracing
        /// Where the spans of loads and remote calls go (package trait `Tracing`). Default
        /// nil: the tracer bootstrapped in `InstrumentationSystem` when the cache is created.
        /// Without one (the no-op tracer), the cache traces nothing and pays nothing for it.
        public var tracer: (any Tracer)?
        #endif

        /// Creates a configuration; every parameter has the default documented on its property.
        public init(
            memory: MemoryCache<String, Value>.Configuration = .init(),
            disk: DiskCache.Configuration = .init(),
            cost: (@Sendable (Value) -> Int64)? = nil,
            removesUndecodableValues: Bool = true,
            memoryPressureMonitor: MemoryPressureMonitor? = nil
        ) {
            self.memory = memory
            self.disk = disk
            self.cost = cost
            self.removesUndecodableValues = removesUndecodableValues
            self.memoryPressureMonitor = memoryPressureMonitor
        }
    }

    /// When a write or a removal reaches the remote level.
    public enum RemoteWrite: Sendable, Hashable {
        /// Before the call returns (its failure is counted, not thrown). The default.
        case immediate
        /// On a queue of the cache's own, in call order, after the call returns;
        /// `waitForBackgroundWrites()` awaits them.
        case background
    }

    /// What a cache drops when its remote level may have missed changes other nodes made.
    public enum RemoteResynchronization: Sendable, Hashable {
        /// Every value in memory and on disk (the default).
        case localValues
        /// Every value in memory; the disk level's values stay and may be stale until
        /// they expire.
        case memoryValues
        /// Nothing: local values may be stale until they expire.
        case nothing
    }

    /// When `setValue` writes to the disk level.
    public enum DiskWrite: Sendable, Hashable {
        /// Before `setValue` returns; its errors are thrown. The default.
        case immediate
        /// On a background queue after `setValue` returns; reads see the value at
        /// once. `waitForBackgroundWrites()` awaits the writes and reports failures.
        case background
        /// Never: the value lives in memory only (and any disk copy is removed).
        case skipped
    }
}
