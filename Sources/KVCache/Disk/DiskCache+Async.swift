import Dispatch
import Foundation

/// Async variants: the same work, run on a bounded pool of threads
/// (`BlockingWorkPool.shared`) so the caller's executor is not blocked by disk I/O
/// and load does not start a thread per waiting call. A call whose task is
/// cancelled before its work starts throws `CancellationError` and does nothing.
extension DiskCache {
    public func value(forKey key: String) async throws -> Data? {
        try await onWorkPool { try self.value(forKey: key) }
    }

    public func setValue(_ data: Data, forKey key: String, expiration: Expiration = .never,
                         extendedData: Data? = nil) async throws {
        try await onWorkPool { try self.setValue(data, forKey: key, expiration: expiration, extendedData: extendedData) }
    }

    public func removeValue(forKey key: String) async throws {
        try await onWorkPool { try self.removeValue(forKey: key) }
    }

    public func contains(_ key: String) async throws -> Bool {
        try await onWorkPool { try self.contains(key) }
    }

    public func info(forKey key: String) async throws -> EntryInfo? {
        try await onWorkPool { try self.info(forKey: key) }
    }

    public func extendedData(forKey key: String) async throws -> Data? {
        try await onWorkPool { try self.extendedData(forKey: key) }
    }

    public func keys(withPrefix prefix: String = "", after: String? = nil, limit: Int) async throws -> [String] {
        try await onWorkPool { try self.keys(withPrefix: prefix, after: after, limit: limit) }
    }

    @discardableResult
    public func touch(_ key: String, expiration: Expiration) async throws -> Bool {
        try await onWorkPool { try self.touch(key, expiration: expiration) }
    }

    @discardableResult
    public func setValueIfAbsent(_ data: Data, forKey key: String, expiration: Expiration = .never,
                                 extendedData: Data? = nil) async throws -> Bool {
        try await onWorkPool {
            try self.setValueIfAbsent(data, forKey: key, expiration: expiration, extendedData: extendedData)
        }
    }

    public func setValues(_ values: [String: Data], expiration: Expiration = .never) async throws {
        try await onWorkPool { try self.setValues(values, expiration: expiration) }
    }

    public func values(forKeys keys: [String]) async throws -> [String: Data] {
        try await onWorkPool { try self.values(forKeys: keys) }
    }

    @discardableResult
    public func removeValues(withPrefix prefix: String) async throws -> Int {
        try await onWorkPool { try self.removeValues(withPrefix: prefix) }
    }

    public func removeAll() async throws {
        try await onWorkPool { try self.removeAll() }
    }

    @discardableResult
    public func trim(toCount count: Int) async throws -> Int {
        try await onWorkPool { try self.trim(toCount: count) }
    }

    @discardableResult
    public func trim(toSize size: Int64) async throws -> Int {
        try await onWorkPool { try self.trim(toSize: size) }
    }

    @discardableResult
    public func trim(toAge age: Duration) async throws -> Int {
        try await onWorkPool { try self.trim(toAge: age) }
    }

    public func flush(durability: Durability = .synced) async throws {
        try await onWorkPool { try self.flush(durability: durability) }
    }

    func onWorkPool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await workPool.run(work)
    }
}
