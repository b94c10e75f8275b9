#if HTTP
import Foundation
import HTTPTypes
import KVCache
@testable import KVCacheHTTP
import Testing

/// What is stored, under which key, in which variant, and what removes it (RFC 9111 §3, §4.1, §4.4).
@Suite struct HTTPCacheStorageTests {
    @Test func theKeyIsTheWholeURLQueryIncluded() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin { request, _ in
            (HTTPResponse(status: .ok, headerFields: [.cacheControl: "max-age=100"]), Data((request.path ?? "").utf8))
        }
        _ = try await fixture.get("/a?x=1", from: origin)
        _ = try await fixture.get("/a?x=2", from: origin)
        #expect(try await fixture.get("/a?x=1", from: origin).text == "/a?x=1")
        #expect(try await fixture.get("/a?x=2", from: origin).text == "/a?x=2")
        let other = HTTPRequest(method: .get, scheme: "https", authority: "other.example", path: "/a?x=1")
        #expect(try await fixture.cache.response(for: other, transport: origin.transport).outcome == .miss)
        #expect(origin.count == 3)
    }

    @Test func responsesThatMustNotBeStoredAreNot() async throws {
        for (mode, request, fields, status) in [
            (HTTPCache.Mode.shared, HTTPFields(), HTTPFields([HTTPField(name: .cacheControl, value: "max-age=100, no-store")]), 200),
            (.shared, [.cacheControl: "no-store"], [.cacheControl: "max-age=100"], 200),
            (.shared, [:], [.cacheControl: "max-age=100, private"], 200),
            (.shared, [.authorization: "Basic YTpi"], [.cacheControl: "max-age=100"], 200),
            (.shared, [:], [.cacheControl: "max-age=100", .vary: "*"], 200),
            (.shared, [:], [:], 302),
            (.shared, [:], [.cacheControl: "max-age=100"], 206),
            (.private, [:], [.cacheControl: "max-age=100, no-store"], 200),
        ] as [(HTTPCache.Mode, HTTPFields, HTTPFields, Int)] {
            let fixture = try HTTPCacheFixture(mode: mode)
            defer { fixture.remove() }
            let origin = HTTPTestOrigin(status: .init(code: status), fields: fields)
            _ = try await fixture.get("/a", request, from: origin)
            #expect(try await fixture.get("/a", request, from: origin).outcome == .miss, "\(mode) \(request) \(fields) \(status)")
            #expect(try await fixture.storage.value(forKey: fixture.cache.key(for: HTTPCacheFixture.request("/a"))!) == nil)
        }
    }

    @Test func whatASharedCacheRefusesAPrivateOneStores() async throws {
        for (request, fields) in [
            (HTTPFields(), HTTPFields([HTTPField(name: .cacheControl, value: "max-age=100, private")])),
            ([.authorization: "Basic YTpi"], [.cacheControl: "max-age=100"]),
        ] as [(HTTPFields, HTTPFields)] {
            let fixture = try HTTPCacheFixture(mode: .private)
            defer { fixture.remove() }
            let origin = HTTPTestOrigin(fields: fields)
            _ = try await fixture.get("/a", request, from: origin)
            #expect(try await fixture.get("/a", request, from: origin).outcome == .hit)
        }
        // Authorization with public, s-maxage or must-revalidate may be stored by a shared cache.
        let fixture = try HTTPCacheFixture(mode: .shared)
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100, public"])
        _ = try await fixture.get("/a", [.authorization: "Basic YTpi"], from: origin)
        #expect(try await fixture.get("/a", [.authorization: "Basic YTpi"], from: origin).outcome == .hit)
    }

    @Test func varyKeepsAVariantPerValueOfTheNamedFields() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin { request, _ in
            (HTTPResponse(status: .ok, headerFields: [.cacheControl: "max-age=100", .vary: "X-Variant"]),
             Data((request.headerFields[.testVariant] ?? "none").utf8))
        }
        _ = try await fixture.get("/a", [.testVariant: "one"], from: origin)
        _ = try await fixture.get("/a", [.testVariant: "two"], from: origin)
        _ = try await fixture.get("/a", from: origin)
        #expect(origin.count == 3)
        #expect(try await fixture.get("/a", [.testVariant: "one"], from: origin).text == "one")
        #expect(try await fixture.get("/a", [.testVariant: "two"], from: origin).text == "two")
        #expect(try await fixture.get("/a", from: origin).text == "none")
        // Whitespace around list members does not make another variant.
        _ = try await fixture.get("/b", [.testVariant: "a, b"], from: origin)
        #expect(try await fixture.get("/b", [.testVariant: "a,b"], from: origin).outcome == .hit)
        #expect(origin.count == 4)
    }

    @Test func theOldestVariantGoesPastTheLimit() async throws {
        let fixture = try HTTPCacheFixture { $0.maximumVariants = 2 }
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100", .vary: "X-Variant"])
        for value in ["1", "2", "3"] { _ = try await fixture.get("/a", [.testVariant: value], from: origin) }
        #expect(try await fixture.get("/a", [.testVariant: "3"], from: origin).outcome == .hit)
        #expect(try await fixture.get("/a", [.testVariant: "2"], from: origin).outcome == .hit)
        #expect(try await fixture.get("/a", [.testVariant: "1"], from: origin).outcome == .miss)
    }

    @Test func aSuccessfulUnsafeRequestInvalidatesItsURLAndSameOriginLocations() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let stored = HTTPTestOrigin(fields: [.cacheControl: "max-age=100"])
        for path in ["/a", "/b", "/c?q=1", "/d"] { _ = try await fixture.get(path, from: stored) }
        let post = HTTPTestOrigin(fields: [.location: "/b", .contentLocation: "c?q=1"])
        _ = try await fixture.get("/a", method: .post, from: post)
        #expect(try await fixture.get("/a", from: stored).outcome == .miss)
        #expect(try await fixture.get("/b", from: stored).outcome == .miss)
        #expect(try await fixture.get("/c?q=1", from: stored).outcome == .miss)
        #expect(try await fixture.get("/d", from: stored).outcome == .hit)
        // Another origin's Location, and a failed request, invalidate nothing.
        let foreign = HTTPTestOrigin(fields: [.location: "https://other.example/d"])
        _ = try await fixture.get("/a", method: .delete, from: foreign)
        #expect(try await fixture.get("/d", from: stored).outcome == .hit)
        let failed = HTTPTestOrigin(status: .internalServerError, fields: [:])
        _ = try await fixture.get("/d", method: .put, from: failed)
        #expect(try await fixture.get("/d", from: stored).outcome == .hit)
    }

    @Test func headIsAnsweredFromTheStoredGetWithoutABody() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100"], body: "0123456789")
        _ = try await fixture.get("/a", from: origin)
        let head = try await fixture.get("/a", method: .head, from: origin)
        #expect(head.outcome == .hit)
        #expect(head.body.isEmpty)
        #expect(origin.count == 1)
    }

    @Test func aRangeIsServedFromAStoredCompleteResponse() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100"], body: "0123456789")
        _ = try await fixture.get("/a", from: origin)
        let part = try await fixture.get("/a", [.range: "bytes=2-4"], from: origin)
        #expect(part.response.status == .partialContent)
        #expect(part.text == "234")
        #expect(part.response.headerFields[.contentRange] == "bytes 2-4/10")
        let suffix = try await fixture.get("/a", [.range: "bytes=-3"], from: origin)
        #expect(suffix.text == "789")
        let beyond = try await fixture.get("/a", [.range: "bytes=20-"], from: origin)
        #expect(beyond.response.status == .rangeNotSatisfiable)
        #expect(beyond.response.headerFields[.contentRange] == "bytes */10")
        #expect(origin.count == 1)
        // Several ranges go to the origin.
        _ = try await fixture.get("/a", [.range: "bytes=0-1,3-4"], from: origin)
        #expect(origin.count == 2)
    }

    @Test func theRequestsOwnConditionsAreAnsweredWith304() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100", .eTag: "\"x\"",
                                             .lastModified: HTTPDate.format(fixture.clock.now - 100)])
        _ = try await fixture.get("/a", from: origin)
        let matched = try await fixture.get("/a", [.ifNoneMatch: "W/\"x\""], from: origin)
        #expect(matched.response.status == .notModified)
        #expect(matched.body.isEmpty)
        #expect(try await fixture.get("/a", [.ifNoneMatch: "\"y\""], from: origin).response.status == .ok)
        let since = HTTPDate.format(fixture.clock.now - 50)
        #expect(try await fixture.get("/a", [.ifModifiedSince: since], from: origin).response.status == .notModified)
        #expect(origin.count == 1)
    }

    /// What another writer stores under the URL (another HTTPCache over the same storage, or
    /// another process through the disk level) is served from its next hit.
    @Test func aResponseAnotherWriterStoresIsServedNotTheOneDecodedBefore() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let other = try HTTPCache(storage: fixture.storage, configuration: .init(mode: .shared), clock: { fixture.clock.now })
        let origin = HTTPTestOrigin { _, number in
            (HTTPResponse(status: .ok, headerFields: [.cacheControl: "max-age=100"]), Data("version \(number)".utf8))
        }
        _ = try await fixture.get("/a", from: origin)
        #expect(try await fixture.get("/a", from: origin).text == "version 1")

        let refetched = try await other.response(for: HTTPCacheFixture.request("/a", [.cacheControl: "no-cache"]),
                                                 transport: origin.transport)
        #expect(refetched.text == "version 2")
        let hit = try await fixture.get("/a", from: origin)
        #expect(hit.outcome == .hit && hit.text == "version 2")

        // Bytes written to the disk level (as another process writes them) drop the memory
        // level's record: the next hit decodes them, and serves the same.
        let key = try #require(fixture.cache.key(for: HTTPCacheFixture.request("/a")))
        let bytes = try #require(try await fixture.storage.disk.value(forKey: key))
        try await fixture.storage.disk.setValue(bytes, forKey: key)
        #expect(fixture.storage.memory.value(forKey: key) == nil)
        #expect(try await fixture.get("/a", from: origin).text == "version 2")
        #expect(fixture.storage.memory.value(forKey: key) != nil)
        #expect(origin.count == 2)
    }
}
#endif
