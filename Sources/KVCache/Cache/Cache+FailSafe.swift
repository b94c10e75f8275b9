import Foundation

extension Cache {
    /// Fail-safe: when a load's computation throws and the key's value expired not long
    /// ago, the load serves that value, marked stale, instead of the error (FusionCache's
    /// idea). `Configuration.failSafe`; off by default.
    ///
    /// The disk level keeps expired values for `maxStaleness` past their expiration (they
    /// still count toward its limits, and `trim` and the limits still remove them); every
    /// ordinary read treats them as expired. Stale values are served from the disk level
    /// only: the memory level drops expired values, and a remote level's copies expire
    /// with it. So a value stored with `diskWrite: .skipped`, dropped by a trim, by another
    /// process's sweep of the same directory, or because another node changed it, is not
    /// served stale.
    public struct FailSafe: Sendable, Hashable {
        /// How long past its expiration a value may be served: more than zero, at most
        /// 365 days.
        public var maxStaleness: Duration
        /// After a computation failed and the stale value was served, loads of that key
        /// serve it for this long without computing, so a failing source is not called on
        /// every load. From zero (compute on every load) to `maxStaleness`. Default 10 s.
        public var retryInterval: Duration

        /// Fail-safe for `maxStaleness` past expiration, retrying after `retryInterval`.
        public init(maxStaleness: Duration, retryInterval: Duration = .seconds(10)) {
            self.maxStaleness = maxStaleness
            self.retryInterval = retryInterval
        }

        /// The longest `maxStaleness`.
        public static var longestStaleness: Duration { .seconds(365 * 86_400) }

        /// Throws `KVCacheError.invalidArgument` for a setting out of range.
        func validate() throws {
            try Validation.check(maxStaleness > .zero && maxStaleness <= Self.longestStaleness,
                                 "failSafe.maxStaleness must be more than zero and at most 365 days, not \(maxStaleness)")
            try Validation.check(retryInterval >= .zero && retryInterval <= maxStaleness,
                                 "failSafe.retryInterval must be from zero to maxStaleness, not \(retryInterval)")
        }
    }

    /// After `key`'s computation threw `error`: the key's value that expired within the
    /// fail-safe window, marked stale (counted, logged, and remembered for `retryInterval`),
    /// or nil.
    func servingStale(_ key: String, after error: any Error) async -> LoadResult<Value>? {
        guard let failSafe, !(error is CancellationError),
              let stale = await expiredValue(forKey: key, within: failSafe) else { return nil }
        if failSafe.retryInterval > .zero {
            let now = disk.configuration.clock()
            failSafeRetries.record(key, error: error, now: now, until: now + failSafe.retryInterval.seconds)
        }
        counters.failSafeServes.wrappingAdd(1, ordering: .relaxed)
        disk.diagnostics.failed("computing \(key) (fail-safe: serving its value that expired at \(stale.expiredAt))",
                                error, path: disk.path)
        return .stale(stale.value, expiredAt: stale.expiredAt, error: error)
    }

    /// Within `retryInterval` of a failed computation of `key` whose stale value was served:
    /// that value again, without computing; else nil.
    func servingStaleWithoutRetrying(_ key: String) async -> LoadResult<Value>? {
        guard let failSafe, let error = failSafeRetries.error(forKey: key, now: disk.configuration.clock()),
              let stale = await expiredValue(forKey: key, within: failSafe) else { return nil }
        counters.failSafeServes.wrappingAdd(1, ordering: .relaxed)
        return .stale(stale.value, expiredAt: stale.expiredAt, error: error)
    }

    /// `key`'s value that expired less than `maxStaleness` ago, from a background write not
    /// landed yet, else from the disk level; nil if there is none or it does not decode.
    /// Reads only: nothing is recorded or removed.
    private func expiredValue(forKey key: String, within failSafe: FailSafe) async -> (value: Value, expiredAt: Date)? {
        let found: (data: Data, deadline: Double)?
        if let write = writes.pendingWrite(forKey: key) {
            // The queued write is the key's latest value: the disk's is older.
            let now = disk.configuration.clock()
            guard let deadline = write.deadline, deadline <= now, now - failSafe.maxStaleness.seconds < deadline
            else { return nil }
            found = (write.data, deadline)
        } else {
            do {
                found = try await disk.onWorkPool { try self.disk.expiredEntry(forKey: key) }
            } catch {
                disk.diagnostics.failed("reading the expired value of \(key) (fail-safe)", error, path: disk.path)
                return nil
            }
        }
        guard let found, let value = try? coder.decode(found.data) else { return nil }
        return (value, Date(timeIntervalSince1970: found.deadline))
    }
}

/// The keys whose computation failed recently and whose stale value was served: until when
/// loads serve it without computing, and the failure.
final class FailSafeRetries: Sendable {
    private let records = MutexBox<[ByteWiseKey: (until: Double, error: any Error)]>([:])
    /// Past this many keys failing at once, the newest are retried on every load (a bound
    /// on memory; the stale values themselves are on disk).
    static let limit = 10_000

    func record(_ key: String, error: any Error, now: Double, until: Double) {
        records.withLock { records in
            if records.count >= Self.limit { records = records.filter { $0.value.until > now } }
            if records.count < Self.limit { records[ByteWiseKey(key)] = (until, error) }
        }
    }

    /// The failure recorded for `key`, if its retry interval has not passed.
    func error(forKey key: String, now: Double) -> (any Error)? {
        records.withLock { records in
            let key = ByteWiseKey(key)
            guard let record = records[key] else { return nil }
            guard record.until > now else {
                records[key] = nil
                return nil
            }
            return record.error
        }
    }
}
