#if Hummingbird
import Foundation
import Hummingbird
import KVCache
import Synchronization

/// A Hummingbird `PersistDriver` that keeps values in a KVCache `Cache<Data>`: in memory,
/// on disk (so they survive a restart), and in the cache's remote level when it has one,
/// within the cache's limits.
///
/// Values are stored encoded (JSON by default), so values of any `Codable` types share one
/// cache. Add the driver to the application's services so that graceful shutdown flushes
/// and closes the cache:
///
/// ```swift
/// let persist = try KVCachePersistDriver(name: "sessions", baseDirectory: cachesURL)
/// let app = Application(router: router, services: [persist])
/// ```
///
/// Per the `PersistDriver` contract: `create` throws `PersistError.duplicate` when the key
/// holds a live value; `set` without an expiration keeps the key's current one; an expired
/// key counts as absent; `get` of a value stored as another type returns nil and leaves the
/// value in place. An expiration of zero or less stores a value that has already expired.
public final class KVCachePersistDriver: PersistDriver {
    /// The cache the values live in.
    public let cache: Cache<Data>
    /// Turns values into the cache's bytes and back.
    public let coder: any PersistValueCoder

    let closesCacheOnShutdown: Bool
    let stripes = KeyStripes()
    let isShutDown = Atomic(false)

    /// Limits for a driver that opens its own cache: 100,000 entries and 64 MiB in memory,
    /// 1 GiB on disk.
    public static var defaultConfiguration: Cache<Data>.Configuration {
        var configuration = Cache<Data>.Configuration()
        configuration.memory.countLimit = 100_000
        configuration.memory.costLimit = 64 << 20
        configuration.disk.sizeLimit = 1 << 30
        return configuration
    }

    /// Opens the cache `name` in `baseDirectory/name/`; `shutdown()` flushes and closes it.
    ///
    /// - Throws: `KVCacheError.invalidArgument` for a bad name or configuration; the disk
    ///   level's errors (`KVCacheError.directoryInUse` if this process has it open already).
    public convenience init(
        name: String, baseDirectory: URL, configuration: Cache<Data>.Configuration = defaultConfiguration,
        coder: some PersistValueCoder = JSONPersistCoder()
    ) throws {
        let cache = try Cache<Data>(name: name, baseDirectory: baseDirectory, coder: DataCoder(),
                                    configuration: configuration)
        self.init(cache: cache, coder: coder, closesCacheOnShutdown: true)
    }

    /// Opens the cache whose disk level lives in `directory`; `shutdown()` flushes and closes it.
    ///
    /// - Throws: as `init(name:baseDirectory:configuration:coder:)`.
    public convenience init(
        directory: URL, configuration: Cache<Data>.Configuration = defaultConfiguration,
        coder: some PersistValueCoder = JSONPersistCoder()
    ) throws {
        let cache = try Cache<Data>(directory: directory, coder: DataCoder(), configuration: configuration)
        self.init(cache: cache, coder: coder, closesCacheOnShutdown: true)
    }

    /// Uses an open cache (one with a remote level, say). `shutdown()` flushes it, and closes
    /// it only if `closesCacheOnShutdown`. Write to the cache's keys through this driver
    /// only: values written directly bypass its encoding and its per-key ordering.
    public init(cache: Cache<Data>, coder: some PersistValueCoder = JSONPersistCoder(),
                closesCacheOnShutdown: Bool = false) {
        self.cache = cache
        self.coder = coder
        self.closesCacheOnShutdown = closesCacheOnShutdown
    }

    /// Stores `value` for `key` unless the key holds a live value.
    ///
    /// - Throws: `PersistError.duplicate` if it does; the coder's error; `KVCacheError`
    ///   (`invalidKey` for an empty or too long key, the disk level's errors).
    public func create<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        let data = try coder.encode(value)
        let expiration = Self.expiration(expires)
        let cache = cache
        let stored = try await cache.disk.onWorkPool { [stripes] in
            try stripes.withLock(forKey: key) {
                try cache.setValueIfAbsent(data, forKey: key, expiration: expiration)
            }
        }
        if !stored { throw PersistError.duplicate }
    }

    /// Stores `value` for `key`, replacing any value. Without `expires` the key keeps the
    /// expiration of its live value (none if it has none, or no live value).
    ///
    /// - Throws: the coder's error; `KVCacheError` (see `create`).
    public func set<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        let data = try coder.encode(value)
        let cache = cache
        if let expires {
            let expiration = Self.expiration(expires)
            try await cache.disk.onWorkPool { [stripes] in
                try stripes.withLock(forKey: key) {
                    try cache.setValue(data, forKey: key, expiration: expiration)
                }
            }
        } else {
            try await cache.disk.onWorkPool { [stripes] in
                try stripes.withLock(forKey: key) {
                    let current = try cache.expiration(forKey: key) ?? .never
                    try cache.setValue(data, forKey: key, expiration: current)
                }
            }
        }
    }

    /// The value for `key` decoded as `type`, or nil if there is no live value or it does
    /// not decode as `type` (the value stays stored).
    ///
    /// - Throws: `KVCacheError` (see `create`).
    public func get<Object: Codable & Sendable>(key: String, as type: Object.Type) async throws -> Object? {
        guard let data = try await cache.value(forKey: key) else { return nil }
        return try? coder.decode(type, from: data)
    }

    /// The value for `key` decoded as `type` and the time it has left (nil if it never
    /// expires), or nil as `get` returns nil.
    ///
    /// - Throws: `KVCacheError` (see `create`).
    public func getWithTTL<Object: Codable & Sendable>(
        key: String, as type: Object.Type
    ) async throws -> (object: Object, ttl: Duration?)? {
        let cache = cache
        let entry = try await cache.disk.onWorkPool { [stripes] () -> (Data, Expiration)? in
            try stripes.withLock(forKey: key) {
                guard let expiration = try cache.expiration(forKey: key),
                      let data = try cache.value(forKey: key) else { return nil }
                return (data, expiration)
            }
        }
        guard let (data, expiration) = entry, let object = try? coder.decode(type, from: data) else { return nil }
        switch expiration {
        case .never:
            return (object, nil)
        case .at(let date):
            let remaining = date.timeIntervalSinceNow
            // It expired after the read.
            guard remaining > 0 else { return nil }
            return (object, Self.duration(seconds: remaining))
        case .after(let duration):
            // The cache reports deadlines as dates; kept for completeness.
            return (object, duration)
        }
    }

    /// Removes the value for `key`, if any.
    ///
    /// - Throws: `KVCacheError` (see `create`).
    public func remove(key: String) async throws {
        let cache = cache
        try await cache.disk.onWorkPool { [stripes] in
            try stripes.withLock(forKey: key) { try cache.removeValue(forKey: key) }
        }
    }

    /// Flushes the cache to disk and, if the driver opened it (or was told to), closes it.
    /// Later calls do nothing.
    public func shutdown() async throws {
        guard !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try await cache.flush()
        if closesCacheOnShutdown { try cache.close() }
    }

    /// `expires` as the cache's expiration: zero or less has expired already.
    static func expiration(_ expires: Duration?) -> Expiration {
        guard let expires else { return .never }
        return .after(expires)
    }

    /// `seconds` (positive) as a duration, saturating where `Duration.seconds(_:)` would trap.
    static func duration(seconds: Double) -> Duration {
        // 2^63 seconds: Int64's range, well inside Duration's.
        seconds >= 9.2e18 ? .seconds(Int64.max) : .seconds(seconds)
    }
}
#endif
