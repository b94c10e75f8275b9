#if Vapor
import Foundation
import KVCache
import Vapor

/// Vapor's `Cache` over a KVCache `Cache<Data>`: values are stored as their encoded bytes, so
/// one cache holds values of any type, in memory, on disk and in a remote level.
///
/// A memory hit of a small value is answered on the caller's thread; disk reads, every write
/// and the decoding of large values run off the event loop (the cache's bounded work pool,
/// through a task). Every future completes on `eventLoop`.
struct KVCacheDriver: Vapor.Cache {
    let storage: DriverStorage
    let eventLoop: any EventLoop

    /// Values up to this size found in memory are decoded on the caller's thread; larger
    /// ones in a task, so a big decode never holds up an event loop.
    static let inlineDecodingLimit = 16 * 1024

    func get<T: Decodable & Sendable>(_ key: String, as type: T.Type) -> EventLoopFuture<T?> {
        let cache: KVCache.Cache<Data>
        do { cache = try storage.cache() } catch { return eventLoop.makeFailedFuture(error) }
        let coder = storage.coder
        if let data = cache.memory.value(forKey: key), data.count <= Self.inlineDecodingLimit {
            return eventLoop.makeCompletedFuture { try coder.decode(type, from: data) }
        }
        return eventLoop.makeFutureWithTask {
            // Memory first again: a hit of a large value lands here without a disk read.
            guard let data = try await cache.value(forKey: key) else { return nil }
            return try coder.decode(type, from: data)
        }
    }

    func set<T: Encodable & Sendable>(_ key: String, to value: T?) -> EventLoopFuture<Void> {
        set(key, to: value, expiresIn: nil)
    }

    func set<T: Encodable & Sendable>(
        _ key: String, to value: T?, expiresIn expirationTime: CacheExpirationTime?
    ) -> EventLoopFuture<Void> {
        let cache: KVCache.Cache<Data>
        do { cache = try storage.cache() } catch { return eventLoop.makeFailedFuture(error) }
        let coder = storage.coder
        let diskWrite = storage.diskWrite
        // nil, and a lifetime that has already ended, leave the key without a value.
        guard let value, let expiration = DriverExpiration(expirationTime).expiration else {
            return eventLoop.makeFutureWithTask { try await cache.removeValue(forKey: key) }
        }
        return eventLoop.makeFutureWithTask {
            let data = try coder.encode(value)
            try await cache.setValue(data, forKey: key, expiration: expiration, diskWrite: diskWrite)
        }
    }

    func `for`(_ request: Request) -> KVCacheDriver {
        KVCacheDriver(storage: storage, eventLoop: request.eventLoop)
    }
}
#endif
