import Foundation

extension Cache {
    /// The value for `key`, computed and stored in both levels on a miss.
    ///
    /// Concurrent calls for a key that misses run `compute` once and all get
    /// its value, or its error (then nothing is stored and the next call computes
    /// again). A caller cancelled while waiting gets `CancellationError`; the
    /// others keep waiting for the same computation, which is cancelled only
    /// when every caller has gone. A stored value that no longer decodes counts
    /// as a miss here (it is replaced by the computed value).
    ///
    /// With `refreshAfter` (stale-while-revalidate), a value found once it is older
    /// than `refreshAfter` is returned at once and recomputed in the background: one
    /// refresh per key at a time, which stores its result unless the entry changed
    /// meanwhile (replaced, removed or touched). A value's age is read from its
    /// expiration: it was stored `.after(lifetime)`, so it is due once less than
    /// `lifetime - refreshAfter` of it remains (values stored by other calls with
    /// another lifetime are judged by this call's). A refresh that throws keeps the
    /// current value until it expires; see `Statistics.failedRefreshes` and
    /// ``waitForRefreshes()``.
    ///
    /// With `Configuration.failSafe`, a computation that throws while the key's value expired
    /// less than `maxStaleness` ago returns that value instead of the error (see ``FailSafe``);
    /// ``result(forKey:expiration:refreshAfter:diskWrite:orCompute:)`` tells it apart.
    ///
    /// - Parameters:
    ///   - key: The key to read, and to store the computed value under.
    ///   - expiration: When the computed value expires.
    ///   - refreshAfter: The age after which a value found is refreshed in the background;
    ///     nil (default) never refreshes. It needs an `.after(lifetime)` expiration with
    ///     `refreshAfter` between zero and `lifetime` (exclusive), or the call throws
    ///     `KVCacheError.invalidArgument`.
    ///   - diskWrite: How the computed value is written to disk; with `.immediate`
    ///     (default) a failed disk write reaches every caller (the value stays in memory).
    ///     A background refresh writes before it stores in memory, as `.immediate` does
    ///     (`.skipped`: memory only).
    ///   - compute: Makes the value on a miss, and in each refresh.
    public func value(
        forKey key: String, expiration: Expiration = .never, refreshAfter: Duration? = nil,
        diskWrite: DiskWrite = .immediate,
        orCompute compute: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await result(forKey: key, expiration: expiration, refreshAfter: refreshAfter, diskWrite: diskWrite,
                         orCompute: compute).value
    }

    /// `value(forKey:expiration:refreshAfter:diskWrite:orCompute:)`, telling where the value
    /// came from: a level, the computation, or (fail-safe) an expired value served because
    /// the computation threw, marked ``LoadResult/stale(_:expiredAt:error:)``.
    ///
    /// - Parameters:
    ///   - key: The key to read, and to store the computed value under.
    ///   - expiration: When the computed value expires.
    ///   - refreshAfter: As for `value(forKey:expiration:refreshAfter:diskWrite:orCompute:)`.
    ///   - diskWrite: How the computed value is written to disk.
    ///   - compute: Makes the value on a miss, and in each refresh.
    public func result(
        forKey key: String, expiration: Expiration = .never, refreshAfter: Duration? = nil,
        diskWrite: DiskWrite = .immediate,
        orCompute compute: @escaping @Sendable () async throws -> Value
    ) async throws -> LoadResult<Value> {
        #if Tracing
        if let tracer {
            return try await tracer.withSpan("kvcache.load") { span in
                let result = try await untracedResult(forKey: key, expiration: expiration, refreshAfter: refreshAfter,
                                                      diskWrite: diskWrite, orCompute: compute)
                span.attributes[LoadResult<Value>.levelAttribute] = result.level
                span.attributes[LoadResult<Value>.hitAttribute] = result.isHit
                return result
            }
        }
        #endif
        return try await untracedResult(forKey: key, expiration: expiration, refreshAfter: refreshAfter,
                                        diskWrite: diskWrite, orCompute: compute)
    }

    private func untracedResult(
        forKey key: String, expiration: Expiration, refreshAfter: Duration?, diskWrite: DiskWrite,
        orCompute compute: @escaping @Sendable () async throws -> Value
    ) async throws -> LoadResult<Value> {
        let refresh = try refreshAfter.map { try RefreshRule(expiration: expiration, refreshAfter: $0) }
        if let value = memory.value(forKey: key) {
            if let refresh { refreshIfDue(key, refresh, diskWrite: diskWrite, compute: compute) }
            return .memory(value)
        }
        try validate(key)
        // Set by this caller's closure, which runs only if no load of `key` was running.
        let ranOwnLoad = MutexBox(false)
        do {
            let result = try await loads.value(forKey: ByteWiseKey(key)) {
                ranOwnLoad.withLock { $0 = true }
                return try await self.load(key, expiration: expiration, diskWrite: diskWrite, compute: compute)
            }
            countJoinedLoad(unless: ranOwnLoad)
            // A value loaded from disk may be due; a computed one is not (its check is cheap).
            if let refresh { refreshIfDue(key, refresh, diskWrite: diskWrite, compute: compute) }
            return result
        } catch let cancelled as CancellationError {
            throw cancelled  // left before the result: neither served nor missed
        } catch {
            countJoinedLoad(unless: ranOwnLoad)
            throw error
        }
    }

    /// Waits until the background refreshes started so far have stored their values
    /// (or failed, or were dropped).
    public func waitForRefreshes() async {
        await refreshes.waitForAll()
    }

    /// When a value found by a refreshing read is due: the call's lifetime and age.
    struct RefreshRule: Sendable {
        /// A value is due once at most this many seconds of its lifetime remain.
        let dueWithin: Double
        let expiration: Expiration

        init(expiration: Expiration, refreshAfter: Duration) throws {
            guard case .after(let lifetime) = expiration, refreshAfter > .zero, refreshAfter < lifetime else {
                throw KVCacheError.invalidArgument(
                    "refreshAfter needs an .after(lifetime) expiration and a duration between zero and the lifetime")
            }
            dueWithin = (lifetime - refreshAfter).seconds
            self.expiration = expiration
        }
    }

    /// Starts a background refresh of `key` if its live value is due and none is running.
    private func refreshIfDue(
        _ key: String, _ rule: RefreshRule, diskWrite: DiskWrite,
        compute: @escaping @Sendable () async throws -> Value
    ) {
        // A failed look (a disk error) refreshes nothing: the read already succeeded.
        guard case .at(let deadline)? = try? expiration(forKey: key) else { return }
        let now = disk.configuration.clock()
        guard deadline.timeIntervalSince1970 - now <= rule.dueWithin else { return }
        refreshes.start(ByteWiseKey(key)) {
            self.counters.refreshes.wrappingAdd(1, ordering: .relaxed)
            do {
                let value = try await compute()
                let stored = try await self.disk.onWorkPool {
                    try self.replace(key, with: value, ifExpirationIs: .at(deadline), expiration: rule.expiration,
                                     diskWrite: diskWrite)
                }
                if !stored { self.counters.discardedRefreshes.wrappingAdd(1, ordering: .relaxed) }
            } catch {
                self.counters.failedRefreshes.wrappingAdd(1, ordering: .relaxed)
            }
        }
    }

    /// Stores `value` for `key` if the key's live value still has `expected` expiration
    /// (it was not replaced, removed or touched); returns whether it did.
    private func replace(
        _ key: String, with value: Value, ifExpirationIs expected: Expiration, expiration: Expiration,
        diskWrite: DiskWrite
    ) throws -> Bool {
        let (data, cost) = try prepareWrite(value, forKey: key)
        return try writes.mutate(key) {
            guard try self.expiration(forKey: key) == expected else { return false }
            if diskWrite == .skipped {
                try disk.removeValue(forKey: key, reportsChange: false)
            } else {
                try disk.setValue(data, forKey: key, expiration: expiration, extendedData: nil, reportsChange: false)
            }
            memory.setValue(value, forKey: key, cost: cost, expiration: expiration)
            writeRemote(data, forKey: key, expiration: expiration)
            return true
        }
    }

    private func countJoinedLoad(unless ranOwnLoad: MutexBox<Bool>) {
        if !ranOwnLoad.withLock({ $0 }) { counters.joinedLoads.wrappingAdd(1, ordering: .relaxed) }
    }

    /// The load `value(forKey:orCompute:)` runs once for concurrent callers.
    private func load(
        _ key: String, expiration: Expiration, diskWrite: DiskWrite,
        compute: @escaping @Sendable () async throws -> Value
    ) async throws -> LoadResult<Value> {
        // A load that just finished may have stored the value after this caller's miss.
        if let value = memory.value(forKey: key) { return .memory(value) }
        do {
            if let hit = LoadResult(try await disk.onWorkPool({ try self.diskResult(forKey: key) })) { return hit }
        } catch KVCacheError.Code.decodingFailed {
            // Recomputed below, and the undecodable bytes replaced.
        }
        if failSafe != nil, let stale = await servingStaleWithoutRetrying(key) { return stale }
        if let remoteLoadLease, let remote {
            return try await loadUnderRemoteLease(key, remote: remote, lease: remoteLoadLease, expiration: expiration,
                                                  diskWrite: diskWrite, compute: compute)
        }
        return try await computeAndStore(key, expiration: expiration, diskWrite: diskWrite, compute: compute)
    }

    /// Runs `compute` and stores its value; if it throws, fail-safe may serve a stale value.
    func computeAndStore(
        _ key: String, expiration: Expiration, diskWrite: DiskWrite,
        compute: @escaping @Sendable () async throws -> Value
    ) async throws -> LoadResult<Value> {
        counters.computations.wrappingAdd(1, ordering: .relaxed)
        let value: Value
        do {
            value = try await compute()
        } catch {
            if failSafe != nil, let stale = await servingStale(key, after: error) { return stale }
            throw error
        }
        try await setValue(value, forKey: key, expiration: expiration, diskWrite: diskWrite)
        return .computed(value)
    }
}
