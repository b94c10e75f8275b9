#if Vapor
import Foundation
import KVCache
import KVCacheVapor
import Testing
import Vapor
import VaporTesting

/// Requests through real applications: Vapor's in-memory test client, a running server on a
/// free loopback port, and a restart on the same directory.
@Suite struct KVCacheVaporAppTests {
    @Test(arguments: [Application.Method.inMemory, .running(hostname: "127.0.0.1", port: 0)])
    func requestsStoreReadAndRemoveValues(method: Application.Method) async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            addCacheRoutes(to: app)
            let client = try app.testing(method: method)
            try await client.test(.GET, "cache/greeting") { #expect($0.status == .notFound) }
            try await client.test(.PUT, "cache/greeting", body: ByteBuffer(string: "hello")) {
                #expect($0.status == .noContent)
            }
            try await client.test(.GET, "cache/greeting") { response in
                #expect(response.status == .ok)
                #expect(response.body.string == "hello")
            }
            #expect(try await app.cache.get("greeting", as: String.self) == "hello")
            try await client.test(.DELETE, "cache/greeting") { #expect($0.status == .noContent) }
            try await client.test(.GET, "cache/greeting") { #expect($0.status == .notFound) }
            // A request's lifetime in seconds: expired, the value is gone.
            try await client.test(.PUT, "cache/brief?ttl=1", body: ByteBuffer(string: "soon gone"))
            try await client.test(.GET, "cache/brief") { #expect($0.body.string == "soon gone") }
            #expect(try await eventually {
                try await client.sendRequest(.GET, "cache/brief").status == .notFound
            })
        }
    }

    /// Values stored through requests survive the application: shut down, a new one on the
    /// same directory serves them (and not the removed or expired ones).
    @Test func aRestartedAppServesTheValuesOfTheOneBefore() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            addCacheRoutes(to: app)
            let client = try app.testing()
            for index in 0..<50 {
                try await client.test(.PUT, "cache/k\(index)?ttl=3600", body: ByteBuffer(string: "v\(index)"))
            }
            try await client.test(.PUT, "cache/removed", body: ByteBuffer(string: "x"))
            try await client.test(.DELETE, "cache/removed")
            try await client.test(.PUT, "cache/expired?ttl=0", body: ByteBuffer(string: "x"))
        }
        try await withKVCacheApp(directory: dir.url) { app in
            addCacheRoutes(to: app)
            let client = try app.testing(method: .running(hostname: "127.0.0.1", port: 0))
            #expect(app.caches.kvcache?.memory.count == 0)
            for index in 0..<50 {
                try await client.test(.GET, "cache/k\(index)") { response in
                    #expect(response.status == .ok)
                    #expect(response.body.string == "v\(index)")
                }
            }
            try await client.test(.GET, "cache/removed") { #expect($0.status == .notFound) }
            try await client.test(.GET, "cache/expired") { #expect($0.status == .notFound) }
        }
    }
}
#endif
