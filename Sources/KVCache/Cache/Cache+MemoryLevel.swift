extension Cache {
    /// The memory level of a ``Cache``: a ``MemoryCache`` with `String` keys
    /// compared by their UTF-8 bytes, as the disk level compares them, rather
    /// than by Swift's `String` equality (see ``Cache``).
    ///
    /// It offers `MemoryCache`'s reads, removals, trims and limits under the same
    /// names; each does what it does on ``MemoryCache``. All of them are safe to use
    /// directly: a removal or a trim drops only the memory copy (the disk level keeps
    /// its own, and the next read promotes it again). Values are stored through the
    /// ``Cache``, which orders the two levels. Register it with a
    /// ``MemoryPressureMonitor`` to trim it under pressure.
    public final class MemoryLevel: MemoryPressureTrimmable, Sendable {
        @usableFromInline let cache: MemoryCache<ByteWiseKey, Value>

        init(configuration: MemoryCache<String, Value>.Configuration, clock: CacheClock) throws {
            var byteWise = MemoryCache<ByteWiseKey, Value>.Configuration(
                countLimit: configuration.countLimit, costLimit: configuration.costLimit,
                ageLimit: configuration.ageLimit, lowWatermark: configuration.lowWatermark,
                autoTrimInterval: configuration.autoTrimInterval,
                releasesValuesInBackground: configuration.releasesValuesInBackground,
                extendsExpirationOnAccess: configuration.extendsExpirationOnAccess,
                policy: configuration.policy)
            if let onEviction = configuration.onEviction {
                // Evictions made under the facade's locks are reported once they are released.
                byteWise.onEviction = { key, value, reason in
                    DeferredCallbacks.run { onEviction(key.string, value, reason) }
                }
            }
            cache = try MemoryCache(configuration: byteWise, clock: clock)
        }

        /// See ``MemoryCache/value(forKey:)``.
        @inlinable
        public func value(forKey key: String) -> Value? {
            cache.value(forKey: ByteWiseKey(key))
        }

        /// The value under the key whose UTF-8 bytes are `bytes`, as `value(forKey:)` finds
        /// it, without a `String` for the key (for the package's HTTP cache, whose keys are
        /// assembled from a request's parts).
        @inlinable
        package func value(forKeyBytes bytes: UnsafeRawBufferPointer) -> Value? {
            cache.value(forKeyBytes: bytes)
        }

        /// See ``MemoryCache/contains(_:)``.
        public func contains(_ key: String) -> Bool {
            cache.contains(ByteWiseKey(key))
        }

        /// See ``MemoryCache/count``.
        public var count: Int { cache.count }

        /// See ``MemoryCache/totalCost``.
        public var totalCost: Int64 { cache.totalCost }

        /// See ``MemoryCache/subscript(_:)`` (reading only: values are stored through the cache).
        public subscript(key: String) -> Value? {
            cache[ByteWiseKey(key)]
        }

        /// Stores in the memory level only; the cache calls it in its order of the levels.
        @inlinable
        func setValue(_ value: Value, forKey key: String, cost: Int64 = 0, expiration: Expiration = .never) {
            cache.setValue(value, forKey: ByteWiseKey(key), cost: cost, expiration: expiration)
        }

        /// Stores a value read from a level below after a miss here (a promotion).
        @inlinable
        func promote(_ value: Value, forKey key: String, cost: Int64, expiration: Expiration) {
            cache.store(value, forKey: ByteWiseKey(key), cost: cost, expiration: expiration, mayBeStored: false)
        }

        /// See ``MemoryCache/removeValue(forKey:)``.
        @discardableResult
        public func removeValue(forKey key: String) -> Value? {
            cache.removeValue(forKey: ByteWiseKey(key))
        }

        /// See ``MemoryCache/expiration(forKey:)``.
        public func expiration(forKey key: String) -> Expiration? {
            cache.expiration(forKey: ByteWiseKey(key))
        }

        /// Retimes the memory copy only; the cache calls it with the disk level's.
        @discardableResult
        func touch(_ key: String, expiration: Expiration) -> Bool {
            cache.touch(ByteWiseKey(key), expiration: expiration)
        }

        /// See ``MemoryCache/removeValues(where:)``.
        @discardableResult
        public func removeValues(where shouldRemove: (String) -> Bool) -> Int {
            cache.removeValues { shouldRemove($0.string) }
        }

        /// Removes the entries whose key starts with `prefix`, byte-wise (as the disk level compares).
        func removeValues(withPrefix prefix: String) {
            let prefixBytes = Array(prefix.utf8)
            cache.removeValues { $0.string.utf8.starts(with: prefixBytes) }
        }

        /// See ``MemoryCache/removeAll()``.
        public func removeAll() { cache.removeAll() }

        /// See ``MemoryCache/close()``.
        public func close() throws { try cache.close() }

        /// See ``MemoryCache/waitForBackgroundWork()``.
        public func waitForBackgroundWork() { cache.waitForBackgroundWork() }

        /// See ``MemoryCache/countLimit``.
        public var countLimit: Int { cache.countLimit }

        /// See ``MemoryCache/costLimit``.
        public var costLimit: Int64 { cache.costLimit }

        /// See ``MemoryCache/ageLimit``.
        public var ageLimit: Duration? { cache.ageLimit }

        /// See ``MemoryCache/setCountLimit(_:)``.
        public func setCountLimit(_ limit: Int) throws { try cache.setCountLimit(limit) }

        /// See ``MemoryCache/setCostLimit(_:)``.
        public func setCostLimit(_ limit: Int64) throws { try cache.setCostLimit(limit) }

        /// See ``MemoryCache/setAgeLimit(_:)``.
        public func setAgeLimit(_ limit: Duration?) throws { try cache.setAgeLimit(limit) }

        /// See ``MemoryCache/trim(toCount:)``.
        public func trim(toCount count: Int) throws { try cache.trim(toCount: count) }

        /// See ``MemoryCache/trim(toCost:)``.
        public func trim(toCost cost: Int64) throws { try cache.trim(toCost: cost) }

        /// See ``MemoryCache/trim(toAge:)``.
        public func trim(toAge age: Duration) throws { try cache.trim(toAge: age) }

        /// See ``MemoryCache/trim(toFraction:reason:)``.
        public func trim(toFraction fraction: Double, reason: EvictionReason = .pressure) throws {
            try cache.trim(toFraction: fraction, reason: reason)
        }

        /// See ``MemoryCache/statistics``.
        public var statistics: MemoryCache<String, Value>.Statistics {
            let statistics = cache.statistics
            return .init(
                hits: statistics.hits, misses: statistics.misses, sets: statistics.sets,
                evictions: statistics.evictions, count: statistics.count, totalCost: statistics.totalCost)
        }
    }
}
