#if OpenAPI
import Foundation
import HTTPTypes
import KVCache
@testable import KVCacheHTTP
import OpenAPIRuntime
import Synchronization
import Testing

/// The cache as an OpenAPI client's middleware: `next` is the rest of the client's chain.
@Suite struct HTTPCacheMiddlewareTests {
    /// A `next` that counts calls, checks what reaches it, and answers `fields` and `body`.
    final class Next: Sendable {
        let calls = Mutex(0)
        let fields: HTTPFields
        let body: HTTPBody.Length?
        let text: String

        init(fields: HTTPFields, text: String = "payload", length: HTTPBody.Length? = nil) {
            self.fields = fields
            self.text = text
            body = length
        }

        func callAsFunction(_ request: HTTPRequest, _ body: HTTPBody?, _ baseURL: URL) async throws -> (HTTPResponse, HTTPBody?) {
            calls.withLock { $0 += 1 }
            // The request reaches the chain relative to baseURL, as the client built it.
            #expect(request.path?.hasPrefix("/pets") == true)
            #expect(request.authority == nil)
            let bytes = Array(text.utf8)
            let answer = self.body.map { HTTPBody(bytes, length: $0) } ?? HTTPBody(bytes)
            return (HTTPResponse(status: .ok, headerFields: fields), answer)
        }
    }

    let baseURL = URL(string: "https://api.example/v1")!

    func request(_ path: String, method: HTTPRequest.Method = .get) -> HTTPRequest {
        HTTPRequest(method: method, scheme: nil, authority: nil, path: path)
    }

    @Test func aSecondReadIsAnsweredWithoutTheChain() async throws {
        let fixture = try HTTPCacheFixture(mode: .private)
        defer { fixture.remove() }
        let middleware = HTTPCacheMiddleware(cache: fixture.cache)
        let next = Next(fields: [.cacheControl: "max-age=60"])
        for _ in 0..<3 {
            let (response, body) = try await middleware.intercept(request("/pets?limit=2"), body: nil, baseURL: baseURL,
                                                                   operationID: "listPets", next: next.callAsFunction)
            #expect(response.status == .ok)
            #expect(try await String(collecting: try #require(body), upTo: 1024) == "payload")
        }
        #expect(next.calls.withLock { $0 } == 1)
        // The key is the whole URL, base path included: nothing is stored under the path alone.
        let relative = try #require(fixture.cache.key(for: HTTPRequest(method: .get, scheme: "https", authority: "api.example",
                                                                        path: "/pets?limit=2")))
        #expect(try await fixture.storage.value(forKey: relative) == nil)
        let key = try #require(fixture.cache.key(for: HTTPRequest(method: .get, scheme: "https", authority: "api.example",
                                                                   path: "/v1/pets?limit=2")))
        #expect(try await fixture.storage.value(forKey: key) != nil)
    }

    @Test func anUnsafeRequestInvalidatesTheStoredResponse() async throws {
        let fixture = try HTTPCacheFixture(mode: .private)
        defer { fixture.remove() }
        let middleware = HTTPCacheMiddleware(cache: fixture.cache)
        let next = Next(fields: [.cacheControl: "max-age=60"])
        _ = try await middleware.intercept(request("/pets"), body: nil, baseURL: baseURL, operationID: "list", next: next.callAsFunction)
        _ = try await middleware.intercept(request("/pets", method: .post), body: HTTPBody("{}"), baseURL: baseURL,
                                           operationID: "create", next: next.callAsFunction)
        _ = try await middleware.intercept(request("/pets"), body: nil, baseURL: baseURL, operationID: "list", next: next.callAsFunction)
        #expect(next.calls.withLock { $0 } == 3)
    }

    @Test func aBodyLargerThanTheLimitStreamsThroughUnstored() async throws {
        let fixture = try HTTPCacheFixture(mode: .private) { $0.maximumBodySize = 4 }
        defer { fixture.remove() }
        let middleware = HTTPCacheMiddleware(cache: fixture.cache)
        let next = Next(fields: [.cacheControl: "max-age=60"], text: "0123456789", length: .known(10))
        for _ in 0..<2 {
            let (response, body) = try await middleware.intercept(request("/pets"), body: nil, baseURL: baseURL,
                                                                   operationID: "list", next: next.callAsFunction)
            #expect(response.status == .ok)
            #expect(try await String(collecting: try #require(body), upTo: 1024) == "0123456789")
        }
        #expect(next.calls.withLock { $0 } == 2)
    }

    @Test func aLargeBodyIsStoredAsItStreamsAndServedFromItsFile() async throws {
        let fixture = try HTTPCacheFixture(mode: .private) { $0.largeBodyThreshold = 1_000 }
        defer { fixture.remove() }
        let middleware = HTTPCacheMiddleware(cache: fixture.cache)
        let text = String(repeating: "0123456789", count: 20_000)
        let next = Next(fields: [.cacheControl: "max-age=60"], text: text)
        for expectedLength in [HTTPBody.Length.unknown, .known(200_000)] {
            let (_, body) = try await middleware.intercept(request("/pets"), body: nil, baseURL: baseURL,
                                                           operationID: "list", next: next.callAsFunction)
            let received = try #require(body)
            #expect(received.length == expectedLength)
            #expect(try await String(collecting: received, upTo: 1 << 20) == text)
        }
        #expect(next.calls.withLock { $0 } == 1)
    }
}
#endif
