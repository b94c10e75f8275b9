#if Metrics
import Metrics
#endif

extension MemoryCache {
    /// How a memory cache bounds and reports its contents.
    public struct Configuration: Sendable {
        /// The most entries the cache holds. Default: no limit.
        public var countLimit: Int

        /// The most total cost the cache holds, summing the cost given to each
        /// `setValue(_:forKey:cost:expiration:)`. Default: `Int64.max`, which means no limit.
        public var costLimit: Int64

        /// How long an entry may go unread before it expires. Default `nil`: no limit.
        public var ageLimit: Duration?

        /// The fraction of a limit, in (0, 1], the cache trims down to once an
        /// insertion takes it over that limit.
        ///
        /// At 1 (the default) the cache evicts just enough to fit, which keeps
        /// the policy's order exactly. Below 1 it purges down to the lower mark, so a full
        /// cache does not evict on every insertion: with a cost limit of 100 MB
        /// and 0.6, crossing 100 MB trims to 60 MB.
        public var lowWatermark: Double

        /// The time between background trims, which remove expired entries in
        /// short bursts and release evicted values. Default: 5 seconds; `nil` turns them off.
        public var autoTrimInterval: Duration?

        /// Whether evicted and removed values are released on a background
        /// queue rather than on the caller's thread. Default: `true`.
        ///
        /// Values are handed over in small batches; `waitForBackgroundWork()`
        /// hands over the rest and waits until they are released.
        public var releasesValuesInBackground: Bool

        /// Whether reading an entry that expires ``Expiration/after(_:)`` a duration
        /// restarts that duration. Entries that expire at a date are not extended.
        /// Default: `false`.
        public var extendsExpirationOnAccess: Bool

        /// Which entries leave first when a limit is reached. Default:
        /// ``EvictionPolicy/adaptive``; ``EvictionPolicy/lru`` for exact least-recently-used order.
        public var policy: EvictionPolicy

        /// Called for every entry that leaves the cache, with the reason, on the
        /// thread that made it leave (the background trim's thread for auto trims),
        /// never while the cache is locked.
        public var onEviction: (@Sendable (Key, Value, EvictionReason) -> Void)?

        #if Metrics
        /// With a label, the cache's statistics are exported to swift-metrics (package trait
        /// `Metrics`): counters `kvcache_memory_hits`, `_misses`, `_sets`, `_dropped_reads` and
        /// `_evictions` (dimension `reason`), gauges `kvcache_memory_entries` and `_cost`, each
        /// with the dimension `cache` = the label. Default nil: nothing is exported. In a
        /// ``Cache``, set `disk.metricsLabel` instead: it exports both levels under one label.
        public var metricsLabel: String?
        /// The time between exports (also on `reportMetrics()` and at close). Default 10 seconds.
        public var metricsInterval: Duration = .seconds(10)
        /// Where metrics go. Default nil: `MetricsSystem.factory`, the bootstrapped backend.
        public var metricsFactory: (any MetricsFactory)?
        #endif

        /// Creates a configuration; every parameter has the default documented on its property.
        public init(
            countLimit: Int = .max,
            costLimit: Int64 = .max,
            ageLimit: Duration? = nil,
            lowWatermark: Double = 1,
            autoTrimInterval: Duration? = .seconds(5),
            releasesValuesInBackground: Bool = true,
            extendsExpirationOnAccess: Bool = false,
            policy: EvictionPolicy = .adaptive,
            onEviction: (@Sendable (Key, Value, EvictionReason) -> Void)? = nil
        ) {
            self.countLimit = countLimit
            self.costLimit = costLimit
            self.ageLimit = ageLimit
            self.lowWatermark = lowWatermark
            self.autoTrimInterval = autoTrimInterval
            self.releasesValuesInBackground = releasesValuesInBackground
            self.extendsExpirationOnAccess = extendsExpirationOnAccess
            self.policy = policy
            self.onEviction = onEviction
        }

        /// Throws `KVCacheError.invalidArgument` for a setting out of its documented range.
        func validate() throws {
            try Validation.check(countLimit >= 0, "countLimit must not be negative, not \(countLimit)")
            try Validation.check(costLimit >= 0, "costLimit must not be negative, not \(costLimit)")
            try Validation.check(ageLimit.map { $0 >= .zero } ?? true, "ageLimit must not be negative")
            try Validation.check(lowWatermark > 0 && lowWatermark <= 1, "lowWatermark must be in (0, 1], not \(lowWatermark)")
            try Validation.check(autoTrimInterval.map { $0 > .zero } ?? true, "autoTrimInterval must be positive")
            #if Metrics
            try Validation.check(metricsInterval > .zero, "metricsInterval must be positive")
            #endif
        }
    }
}
