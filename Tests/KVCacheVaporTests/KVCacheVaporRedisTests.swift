#if Vapor
import Foundation
import KVCache
import KVCacheRedis
import KVCacheVapor
import Testing
import Vapor

/// The driver with a remote level: two applications (two nodes, each with its own directory)
/// share values through a real Redis (`KVCACHE_REDIS_URL`, which `scripts/test` and `.ci/run`
/// set), and a change on one drops the other's memory copy through the backplane.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["KVCACHE_REDIS_URL"] != nil,
                "KVCACHE_REDIS_URL is not set: run scripts/test, which starts a redis-server"))
struct KVCacheVaporRedisTests {
    static func configuration(namespace: String) throws -> KVCache.Cache<Data>.Configuration {
        let url = try #require(ProcessInfo.processInfo.environment["KVCACHE_REDIS_URL"])
        var configuration = KVCache.Cache<Data>.Configuration()
        configuration.remote = try RedisLevel(configuration: .init(address: try RedisAddress(url), namespace: namespace))
        return configuration
    }

    @Test func twoNodesShareValuesThroughRedis() async throws {
        let first = VaporTemporaryDirectory()
        let second = VaporTemporaryDirectory()
        defer {
            first.remove()
            second.remove()
        }
        let namespace = "vapor-\(UInt32.random(in: 0 ... .max))"
        try await withKVCacheApp(directory: first.url, configuration: try Self.configuration(namespace: namespace)) { a in
            try await withKVCacheApp(directory: second.url, configuration: try Self.configuration(namespace: namespace)) { b in
                try await a.cache.set("shared", to: ["v": 1])
                // Not on b's disk: b reads it from Redis (and keeps a copy in memory).
                #expect(try await b.cache.get("shared", as: [String: Int].self) == ["v": 1])
                #expect(b.caches.kvcache?.memory.contains("shared") == true)
                // A change on a: the backplane drops b's copy, and b reads the new value.
                try await a.cache.set("shared", to: ["v": 2])
                #expect(try await eventually { try await b.cache.get("shared", as: [String: Int].self) == ["v": 2] })
                try await a.cache.delete("shared")
                #expect(try await eventually { try await b.cache.get("shared", as: [String: Int].self) == nil })
                // Lifetimes reach the remote level too.
                let setAt = ContinuousClock.now
                try await b.cache.set("brief", to: "x", expiresIn: .seconds(1))
                let brief = try await a.cache.get("brief", as: String.self)
                #expect(brief == "x" || ContinuousClock.now - setAt >= .seconds(1))
                #expect(try await eventually { try await a.cache.get("brief", as: String.self) == nil })
            }
        }
    }
}
#endif
