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
    /// - Parameters:
    ///   - key: The key to read, and to store the computed value under.
    ///   - expiration: When the computed value expires.
    ///   - diskWrite: How the computed value is written to disk; with `.immediate`
    ///     (default) a failed disk write reaches every caller (the value stays in memory).
    ///   - compute: Makes the value on a miss; called once for all the concurrent callers.
    public func value(
        forKey key: String, expiration: Expiration = .never, diskWrite: DiskWrite = .immediate,
        orCompute compute: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        if let value = memory.value(forKey: key) { return value }
        try validate(key)
        // Set by this caller's closure, which runs only if no load of `key` was running.
        let ranOwnLoad = MutexBox(false)
        do {
            let value = try await loads.value(forKey: ByteWiseKey(key)) {
                ranOwnLoad.withLock { $0 = true }
                return try await self.load(key, expiration: expiration, diskWrite: diskWrite, compute: compute)
            }
            countJoinedLoad(unless: ranOwnLoad)
            return value
        } catch let cancelled as CancellationError {
            throw cancelled  // left before the result: neither served nor missed
        } catch {
            countJoinedLoad(unless: ranOwnLoad)
            throw error
        }
    }

    private func countJoinedLoad(unless ranOwnLoad: MutexBox<Bool>) {
        if !ranOwnLoad.withLock({ $0 }) { counters.withLock { $0.joinedLoads &+= 1 } }
    }

    /// The load `value(forKey:orCompute:)` runs once for concurrent callers.
    private func load(
        _ key: String, expiration: Expiration, diskWrite: DiskWrite,
        compute: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        // A load that just finished may have stored the value after this caller's miss.
        if let value = memory.value(forKey: key) { return value }
        do {
            if let value = try await disk.onWorkPool({ try self.diskResult(forKey: key).value }) {
                return value
            }
        } catch KVCacheError.Code.decodingFailed {
            // Recomputed below, and the undecodable bytes replaced.
        }
        counters.withLock { $0.computations &+= 1 }
        let value = try await compute()
        try await setValue(value, forKey: key, expiration: expiration, diskWrite: diskWrite)
        return value
    }
}
