#if HTTP
import Foundation
import HTTPTypes
import KVCache
@testable import KVCacheHTTP
import Testing

/// The fresh hit answered without the general path: only for requests that ask nothing of
/// the cache, with the same answer the general path gives.
@Suite struct HTTPCacheFreshHitTests {
    @Test func aPlainRequestForAFreshResponseInMemoryIsAnsweredDirectly() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100", .contentType: "text/plain"], body: "hello")
        _ = try await fixture.get("/a", from: origin)
        let plain = HTTPCacheFixture.request("/a", [.accept: "*/*", .userAgent: "test"])
        let hit = try #require(fixture.cache.freshHit(for: plain))
        let general = try await fixture.cache.answer(plain, body: nil, revalidatesInBackground: false,
                                                     transport: .bytes(origin.transport))
        #expect(general.outcome == .hit)
        #expect(hit.response == general.response)
        #expect(hit.body == Data("hello".utf8))
        #expect(hit.response.headerFields[.age] == "0")
        let head = try #require(fixture.cache.freshHit(for: HTTPCacheFixture.request("/a", method: .head)))
        #expect(head.body.isEmpty && head.response.headerFields[.contentType] == "text/plain")
        #expect(origin.count == 1)
    }

    /// The key a hit looks up, built on the stack, is the stored key: scheme and authority
    /// without case, the path and query as they are.
    @Test func theKeyAHitLooksUpIsTheStoredKey() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100"], body: "hello")
        let stored = HTTPRequest(method: .get, scheme: "HTTPS", authority: "Origin.Example:8443", path: "/A?b=C")
        _ = try await fixture.cache.response(for: stored, transport: origin.transport)
        let sameURL = HTTPRequest(method: .get, scheme: "https", authority: "origin.EXAMPLE:8443", path: "/A?b=C")
        #expect(fixture.cache.freshHit(for: sameURL) != nil)
        for other in ["/a?b=C", "/A?b=c", "/A", "/A?b=C/"] {
            let request = HTTPRequest(method: .get, scheme: "https", authority: "origin.example:8443", path: other)
            #expect(fixture.cache.freshHit(for: request) == nil, "\(other)")
        }
        // A non-ASCII authority has its key made the general way, and is found that way.
        let unicode = HTTPRequest(method: .get, scheme: "https", authority: "bücher.example", path: "/")
        _ = try await fixture.cache.response(for: unicode, transport: origin.transport)
        #expect(fixture.cache.freshHit(for: unicode) == nil)
        #expect(try await fixture.cache.response(for: unicode, transport: origin.transport).outcome == .hit)
        #expect(origin.count == 2)
    }

    @Test func aRequestThatAsksSomethingOfTheCacheTakesTheGeneralPath() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100", .eTag: "\"v1\""], body: "hello")
        _ = try await fixture.get("/a", from: origin)
        let asking: [HTTPFields] = [
            [.cacheControl: "max-age=0"], [.cacheControl: "no-cache"], [.pragmaField: "no-cache"],
            [.range: "bytes=0-1"], [.ifNoneMatch: "\"v1\""], [.ifModifiedSince: fixture.date],
        ]
        for fields in asking {
            #expect(fixture.cache.freshHit(for: HTTPCacheFixture.request("/a", fields)) == nil, "\(fields)")
        }
        for method in [HTTPRequest.Method.post, .put, .delete, .options] {
            #expect(fixture.cache.freshHit(for: HTTPCacheFixture.request("/a", method: method)) == nil)
        }
        #expect(fixture.cache.freshHit(for: HTTPCacheFixture.request("/b")) == nil)
    }

    @Test func onlyAFreshMatchingVariantInTheMemoryLevelIsAnsweredDirectly() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100", .vary: "Accept-Language"], body: "bonjour")
        _ = try await fixture.get("/a", [.acceptLanguage: "fr"], from: origin)
        let french = HTTPCacheFixture.request("/a", [.acceptLanguage: "fr"])
        #expect(fixture.cache.freshHit(for: french) != nil)
        #expect(fixture.cache.freshHit(for: HTTPCacheFixture.request("/a", [.acceptLanguage: "de"])) == nil)
        #expect(fixture.cache.freshHit(for: HTTPCacheFixture.request("/a")) == nil)

        // Only on disk: the general path reads it and puts it back in memory.
        fixture.storage.memory.removeAll()
        #expect(fixture.cache.freshHit(for: french) == nil)
        #expect(try await fixture.get("/a", [.acceptLanguage: "fr"], from: origin).outcome == .hit)
        #expect(fixture.cache.freshHit(for: french) != nil)

        // Stale: the general path revalidates it.
        fixture.clock.advance(101)
        #expect(fixture.cache.freshHit(for: french) == nil)
        #expect(origin.count == 1)
    }

    /// With several variants stored under one URL, each request gets the newest variant its
    /// fields select, and none where none matches.
    @Test func eachVariantOfAURLIsAnsweredToTheRequestsItMatches() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        for (language, greeting) in [("fr", "bonjour"), ("de", "hallo"), ("fr", "salut")] {
            let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100", .vary: "Accept-Language"], body: greeting)
            let request = HTTPCacheFixture.request("/a", [.acceptLanguage: language, .cacheControl: "no-cache"])
            _ = try await fixture.cache.response(for: request, transport: origin.transport)
        }
        let french = try #require(fixture.cache.freshHit(for: HTTPCacheFixture.request("/a", [.acceptLanguage: "fr"])))
        #expect(french.body == Data("salut".utf8))
        let german = try #require(fixture.cache.freshHit(for: HTTPCacheFixture.request("/a", [.acceptLanguage: "de"])))
        #expect(german.body == Data("hallo".utf8))
        #expect(fixture.cache.freshHit(for: HTTPCacheFixture.request("/a", [.acceptLanguage: "en"])) == nil)
    }

    /// Stored responses share their status line's storage; each is still served with its own
    /// code and reason phrase, past the number of status lines that are shared.
    @Test func eachStoredResponseKeepsItsOwnStatusLine() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let lines = [(200, "OK"), (200, "Fine"), (203, "Non-Authoritative Information"), (200, "")]
            + (0..<80).map { (200, "Reason \($0)") }
        for (index, (code, reason)) in lines.enumerated() {
            let transport: HTTPCache.Transport = { _, _ in
                (HTTPResponse(status: .init(code: code, reasonPhrase: reason), headerFields: [.cacheControl: "max-age=100"]),
                 Data("body \(index)".utf8))
            }
            _ = try await fixture.cache.response(for: HTTPCacheFixture.request("/\(index)"), transport: transport)
        }
        for (index, (code, reason)) in lines.enumerated() {
            let hit = try #require(fixture.cache.freshHit(for: HTTPCacheFixture.request("/\(index)")))
            #expect(hit.response.status.code == code && hit.response.status.reasonPhrase == reason, "\(index)")
            #expect(hit.body == Data("body \(index)".utf8))
        }
    }

    @Test func aResponseThatRequiresValidationOrABodyOnDiskTakesTheGeneralPath() async throws {
        let fixture = try HTTPCacheFixture { $0.largeBodyThreshold = 4 }
        defer { fixture.remove() }
        let noCache = HTTPTestOrigin(fields: [.cacheControl: "max-age=100, no-cache", .eTag: "\"v1\""], body: "abc")
        _ = try await fixture.get("/validated", from: noCache)
        #expect(fixture.cache.freshHit(for: HTTPCacheFixture.request("/validated")) == nil)
        let large = HTTPTestOrigin(fields: [.cacheControl: "max-age=100"], body: "a body over four bytes")
        _ = try await fixture.get("/large", from: large)
        #expect(try await fixture.get("/large", from: large).outcome == .hit)
        #expect(fixture.cache.freshHit(for: HTTPCacheFixture.request("/large")) == nil)
    }

    @Test func keyPartsAreLowerCasedEightBytesAtATimeAsOneAtATime() {
        // Every byte value, at every place of a word.
        for byte in 0...255 {
            for place in 0..<8 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 8)
                bytes[place] = UInt8(byte)
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                let lowered = withUnsafeBytes(of: HTTPCache.asciiLowercased(word)) { Array($0) }
                #expect(lowered == bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, "byte \(byte) at \(place)")
            }
        }
        // Every length, with the last word overlapping the one before it.
        for length in 0...40 {
            let source = (0..<length).map { UInt8(ascii: "A") + UInt8($0 % 26) + ($0 % 3 == 0 ? 0x20 : 0) }
            var copied = [UInt8](repeating: 0, count: length)
            let bits = source.withUnsafeBufferPointer { from in
                copied.withUnsafeMutableBufferPointer { to in
                    HTTPCache.copyLowerCased(from.baseAddress ?? UnsafePointer(bitPattern: 1)!, to: to.baseAddress ?? UnsafeMutablePointer(bitPattern: 1)!, count: length)
                }
            }
            #expect(copied == source.map { $0 | 0x20 }, "length \(length)")
            #expect(bits < 0x80)
        }
        let notASCII = Array("ORIGIN.\u{C9}XAMPLE".utf8)
        var copied = [UInt8](repeating: 0, count: notASCII.count)
        let bits = notASCII.withUnsafeBufferPointer { from in
            copied.withUnsafeMutableBufferPointer { HTTPCache.copyLowerCased(from.baseAddress!, to: $0.baseAddress!, count: notASCII.count) }
        }
        #expect(bits >= 0x80)
    }
}
#endif
