#if Vapor
import Foundation
import KVCache
import KVCacheVapor
import Testing
import Vapor

/// Two processes share one cache directory: this test's app and `KVCacheVaporTestApp`, a
/// child serving the driver over HTTP. What one stores the other reads once committed (within
/// the group-commit delay); each keeps its own memory level.
@Suite struct KVCacheVaporTwoProcessTests {
    @Test func twoAppsInTwoProcessesShareOneDirectory() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        let child = try TestAppProcess(directory: dir.url)
        var childExit: Int32?
        defer { if childExit == nil { _ = child.stop() } }
        let base = "http://127.0.0.1:\(child.port)/cache"
        try await withKVCacheApp(directory: dir.url) { app in
            try await app.asyncBoot()
            func childPut(_ key: String, _ value: String, ttl: Int? = nil) async throws -> HTTPStatus {
                let query = ttl.map { "?ttl=\($0)" } ?? ""
                return try await app.client.put(URI(string: "\(base)/\(key)\(query)")) { request in
                    request.body = ByteBuffer(string: value)
                }.status
            }
            func childGet(_ key: String) async throws -> String? {
                let response = try await app.client.get(URI(string: "\(base)/\(key)"))
                return response.status == .ok ? response.body.map { String(decoding: $0.readableBytesView, as: UTF8.self) } ?? "" : nil
            }

            // The child stores, this process reads from the shared disk.
            #expect(try await childPut("from-child", "A") == .noContent)
            #expect(try await eventually { try await app.cache.get("from-child", as: String.self) == "A" })
            // This process stores, the child reads.
            try await app.cache.set("from-parent", to: "B")
            #expect(try await eventually { try await childGet("from-parent") == "B" })
            // A removal here: the child, which holds no memory copy, finds nothing.
            try await app.cache.set("removed", to: "C")
            try await app.cache.delete("removed")
            #expect(try await childGet("removed") == nil)
            // A lifetime set in one process ends in the other.
            #expect(try await childPut("brief", "D", ttl: 1) == .noContent)
            #expect(try await eventually { try await app.cache.get("brief", as: String.self) == "D" })
            #expect(try await eventually { try await app.cache.get("brief", as: String.self) == nil })

            // The child's shutdown flushes: its last value is here as soon as it has exited.
            #expect(try await childPut("last", "E") == .noContent)
            childExit = child.stop()
            #expect(childExit == 0)
            #expect(try await app.cache.get("last", as: String.self) == "E")
        }
        // And after both: a new app finds every value.
        try await withKVCacheApp(directory: dir.url) { app async throws in
            #expect(try await app.cache.get("from-child", as: String.self) == "A")
            #expect(try await app.cache.get("from-parent", as: String.self) == "B")
            #expect(try await app.cache.get("last", as: String.self) == "E")
            #expect(try await app.cache.get("removed", as: String.self) == nil)
        }
    }
}
#endif
