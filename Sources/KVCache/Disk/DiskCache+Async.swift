import Dispatch
import Foundation
#if Tracing
import Tracing
#endif

/// Async variants: the same work, run on a bounded pool of threads
/// (`BlockingWorkPool.shared`) so the caller's executor is not blocked by disk I/O
/// and load does not start a thread per waiting call. A call whose task is
/// cancelled before its work starts throws `CancellationError` and does nothing.
extension DiskCache {
    /// The async variant of `value(forKey:)`, run on the bounded work pool.
    public func value(forKey key: String) async throws -> Data? {
        try await onWorkPool { try self.value(forKey: key) }
    }

    /// The async variant of `setValue(_:forKey:expiration:extendedData:)`, run on the bounded
    /// work pool.
    public func setValue(_ data: Data, forKey key: String, expiration: Expiration = .never,
                         extendedData: Data? = nil) async throws {
        try await onWorkPool { try self.setValue(data, forKey: key, expiration: expiration, extendedData: extendedData) }
    }

    /// The async variant of `removeValue(forKey:)`, run on the bounded work pool.
    public func removeValue(forKey key: String) async throws {
        try await onWorkPool { try self.removeValue(forKey: key) }
    }

    /// The async variant of `contains(_:)`, run on the bounded work pool.
    public func contains(_ key: String) async throws -> Bool {
        try await onWorkPool { try self.contains(key) }
    }

    /// The async variant of `info(forKey:)`, run on the bounded work pool.
    public func info(forKey key: String) async throws -> EntryInfo? {
        try await onWorkPool { try self.info(forKey: key) }
    }

    /// The async variant of `extendedData(forKey:)`, run on the bounded work pool.
    public func extendedData(forKey key: String) async throws -> Data? {
        try await onWorkPool { try self.extendedData(forKey: key) }
    }

    /// The async variant of `keys(withPrefix:after:limit:)`, run on the bounded work pool.
    public func keys(withPrefix prefix: String = "", after: String? = nil, limit: Int) async throws -> [String] {
        try await onWorkPool { try self.keys(withPrefix: prefix, after: after, limit: limit) }
    }

    /// The async variant of `touch(_:expiration:)`, run on the bounded work pool.
    @discardableResult
    public func touch(_ key: String, expiration: Expiration) async throws -> Bool {
        try await onWorkPool { try self.touch(key, expiration: expiration) }
    }

    /// The async variant of `setValueIfAbsent(_:forKey:expiration:extendedData:)`, run on the
    /// bounded work pool.
    @discardableResult
    public func setValueIfAbsent(_ data: Data, forKey key: String, expiration: Expiration = .never,
                                 extendedData: Data? = nil) async throws -> Bool {
        try await onWorkPool {
            try self.setValueIfAbsent(data, forKey: key, expiration: expiration, extendedData: extendedData)
        }
    }

    /// The async variant of `setValues(_:expiration:)`, run on the bounded work pool.
    public func setValues(_ values: [String: Data], expiration: Expiration = .never) async throws {
        try await onWorkPool { try self.setValues(values, expiration: expiration) }
    }

    /// The async variant of `values(forKeys:)`, run on the bounded work pool.
    public func values(forKeys keys: [String]) async throws -> [String: Data] {
        try await onWorkPool { try self.values(forKeys: keys) }
    }

    /// The async variant of `removeValues(withPrefix:)`, run on the bounded work pool.
    @discardableResult
    public func removeValues(withPrefix prefix: String) async throws -> Int {
        try await onWorkPool { try self.removeValues(withPrefix: prefix) }
    }

    /// The async variant of `removeAll()`, run on the bounded work pool.
    public func removeAll() async throws {
        try await onWorkPool { try self.removeAll() }
    }

    /// The async variant of `trim(toCount:)`, run on the bounded work pool.
    @discardableResult
    public func trim(toCount count: Int) async throws -> Int {
        try await onWorkPool { try self.trim(toCount: count) }
    }

    /// The async variant of `trim(toSize:)`, run on the bounded work pool.
    @discardableResult
    public func trim(toSize size: Int64) async throws -> Int {
        try await onWorkPool { try self.trim(toSize: size) }
    }

    /// The async variant of `trim(toAge:)`, run on the bounded work pool.
    @discardableResult
    public func trim(toAge age: Duration) async throws -> Int {
        try await onWorkPool { try self.trim(toAge: age) }
    }

    /// The async variant of `flush(durability:)`, run on the bounded work pool.
    public func flush(durability: Durability = .synced) async throws {
        try await onWorkPool { try self.flush(durability: durability) }
    }

    /// Runs blocking work on the bounded work pool (package-wide: the framework drivers run
    /// their read-then-write steps there).
    package func onWorkPool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        #if Tracing
        // The pool's threads do not inherit the task's context: carry the caller's span over,
        // so a remote call's span is its load's child.
        if let context = InstrumentationContext.current {
            return try await workPool.run { try InstrumentationContext.$current.withValue(context) { try work() } }
        }
        #endif
        return try await workPool.run(work)
    }
}
