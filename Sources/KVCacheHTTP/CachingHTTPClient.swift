#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import HTTPTypes
import KVCache
import NIOCore
import NIOHTTP1

/// An AsyncHTTPClient in front of an ``HTTPCache``: a GET or HEAD is answered from a stored
/// response while it may be used, a stale one is revalidated with a conditional request, and
/// what the origin sends is stored when the rules allow. Other methods go to the origin and
/// invalidate what is stored for their URL.
///
/// ```swift
/// let client = try CachingHTTPClient(cache: HTTPCache(directory: cacheDirectory))
/// let answer = try await client.execute(
///     HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/items?page=2"))
/// answer.response.status; answer.body; answer.outcome   // .hit, .revalidated, .miss, ...
/// try await client.shutdown()
/// ```
///
/// The client given must not follow redirects or decompress bodies, the defaults of
/// ``init(cache:timeout:maximumResponseBodySize:)``'s own client: a redirect it followed
/// would be stored under the first URL, and a body it decoded under the encoded one's fields.
public struct CachingHTTPClient: Sendable {
    /// Sends the requests the cache cannot answer.
    public let client: HTTPClient
    /// Answers requests from stored responses and stores new ones.
    public let cache: HTTPCache
    /// The longest a request to the origin may take before its response starts.
    public let timeout: TimeAmount
    /// The largest response body read from the origin: a larger one throws
    /// `NIOTooManyBytesError`, and nothing is stored.
    public let maximumResponseBodySize: Int
    private let ownsClient: Bool

    /// A caching client over `client`, which must neither follow redirects nor decompress.
    ///
    /// - Throws: `KVCacheError.invalidArgument` for a timeout or body limit below 1.
    public init(client: HTTPClient, cache: HTTPCache, timeout: TimeAmount = .seconds(30),
                maximumResponseBodySize: Int = 256 << 20) throws {
        try Self.check(timeout: timeout, maximumResponseBodySize: maximumResponseBodySize)
        self.init(client: client, ownsClient: false, cache: cache, timeout: timeout,
                  maximumResponseBodySize: maximumResponseBodySize)
    }

    /// A caching client over a client of its own (no redirects followed, no decompression),
    /// which ``shutdown()`` shuts down.
    ///
    /// - Throws: `KVCacheError.invalidArgument` for a timeout or body limit below 1.
    public init(cache: HTTPCache, timeout: TimeAmount = .seconds(30), maximumResponseBodySize: Int = 256 << 20) throws {
        // Checked before the client exists: one made and then dropped is never shut down.
        try Self.check(timeout: timeout, maximumResponseBodySize: maximumResponseBodySize)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(
            redirectConfiguration: .disallow, decompression: .disabled))
        self.init(client: client, ownsClient: true, cache: cache, timeout: timeout,
                  maximumResponseBodySize: maximumResponseBodySize)
    }

    private init(client: HTTPClient, ownsClient: Bool, cache: HTTPCache, timeout: TimeAmount,
                 maximumResponseBodySize: Int) {
        self.client = client
        self.ownsClient = ownsClient
        self.cache = cache
        self.timeout = timeout
        self.maximumResponseBodySize = maximumResponseBodySize
    }

    private static func check(timeout: TimeAmount, maximumResponseBodySize: Int) throws {
        guard timeout.nanoseconds > 0, maximumResponseBodySize >= 1 else {
            throw KVCacheError(code: .invalidArgument, message: "timeout and maximumResponseBodySize must be positive")
        }
    }

    /// Answers `request` from the cache, or through the origin; `body` is sent with methods
    /// that have one.
    ///
    /// - Throws: what the client throws (the origin cannot be reached, a body over
    ///   ``maximumResponseBodySize``), unless a stored response may be served instead.
    public func execute(_ request: HTTPRequest, body: Data? = nil) async throws -> HTTPCacheResponse {
        // Before the transport exists: a hit needs none.
        if let hit = cache.freshHit(for: request) { return hit }
        let (client, timeout, limit) = (self.client, self.timeout, maximumResponseBodySize)
        return try await cache.generalResponse(for: request, body: body, revalidatesInBackground: true) { request, body in
            try await Self.send(request, body: body, with: client, timeout: timeout, maximumResponseBodySize: limit)
        }
    }

    /// Answers `request` as ``execute(_:body:)`` does, with a body read in pieces: a large
    /// stored body from its file, the origin's as it arrives (stored on the way once read to
    /// its end). ``maximumResponseBodySize`` does not apply: nothing is held whole.
    ///
    /// - Throws: what the client throws, unless a stored response may be served instead.
    public func executeStreaming(_ request: HTTPRequest, body: Data? = nil) async throws -> HTTPCacheStreamingResponse {
        if let hit = cache.freshHit(for: request) {
            return HTTPCacheStreamingResponse(response: hit.response, body: HTTPCacheBody(hit.body), outcome: .hit)
        }
        let (client, timeout) = (self.client, self.timeout)
        return try await cache.answer(request, body: body, revalidatesInBackground: true, transport: .streaming { request, body in
            try await Self.sendStreaming(request, body: body, with: client, timeout: timeout)
        })
    }

    /// Shuts down the client this one made; a client given at init is left to its owner.
    public func shutdown() async throws {
        if ownsClient { try await client.shutdown() }
    }

    /// Sends `request` to its origin with `client`, bypassing any cache, and reads the whole
    /// response (none for HEAD).
    ///
    /// - Throws: what `client` throws, `NIOTooManyBytesError` for a body over
    ///   `maximumResponseBodySize`, and `KVCacheError.invalidArgument` for a request without
    ///   a scheme, authority or path.
    public static func send(_ request: HTTPRequest, body: Data?, with client: HTTPClient, timeout: TimeAmount,
                            maximumResponseBodySize: Int) async throws -> (HTTPResponse, Data) {
        let (response, incoming) = try await start(request, body: body, with: client, timeout: timeout)
        let bytes = request.method == .head ? ByteBuffer() : try await incoming.collect(upTo: maximumResponseBodySize)
        return (response, Data(bytes.readableBytesView))
    }

    /// Sends `request` to its origin with `client`, bypassing any cache, and returns the
    /// response with its body as it arrives (none for HEAD).
    ///
    /// - Throws: as ``send(_:body:with:timeout:maximumResponseBodySize:)``.
    public static func sendStreaming(_ request: HTTPRequest, body: Data?, with client: HTTPClient,
                                     timeout: TimeAmount) async throws -> (HTTPResponse, HTTPCacheBody) {
        let (response, incoming) = try await start(request, body: body, with: client, timeout: timeout)
        guard request.method != .head else { return (response, .empty) }
        // The origin's Content-Length, where it sent one that parses, describes the body as it
        // arrives: no decoding is asked for (see init).
        let count = response.headerFields[.contentLength].flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
        return (response, HTTPCacheBody(ByteBufferChunks(base: incoming), count: response.status == .notModified
            || response.status == .noContent ? nil : count))
    }

    private static func start(_ request: HTTPRequest, body: Data?, with client: HTTPClient,
                              timeout: TimeAmount) async throws -> (HTTPResponse, HTTPClientResponse.Body) {
        guard let scheme = request.scheme, let authority = request.authority, let path = request.path else {
            throw KVCacheError(code: .invalidArgument, message: "a request needs a scheme, an authority and a path")
        }
        var outgoing = HTTPClientRequest(url: "\(scheme)://\(authority)\(path)")
        // NIO writes its own spelling of some methods (M-SEARCH as "MSEARCH"): other than the
        // common ones, the method goes out by its name as given.
        outgoing.method = commonMethods.contains(request.method.rawValue)
            ? HTTPMethod(rawValue: request.method.rawValue) : .RAW(value: request.method.rawValue)
        for field in request.headerFields { outgoing.headers.add(name: field.name.rawName, value: field.value) }
        if let body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await execute(outgoing, with: client, timeout: timeout,
                                         retries: safeMethods.contains(request.method.rawValue) ? 8 : 0)
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        let status = HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase)
        return (HTTPResponse(status: status, headerFields: fields), response.body)
    }

    /// The origin may close a kept-alive connection as a request goes out on it, before any
    /// answer (seen as a clean close or as a reset): a safe method is then sent again (RFC 9110
    /// §9.2.2), up to as many times as the pool keeps connections to a host (8), since an
    /// origin that closes idle connections after a timeout closes a burst's together.
    private static func execute(_ request: HTTPClientRequest, with client: HTTPClient, timeout: TimeAmount,
                                retries: Int) async throws -> HTTPClientResponse {
        var retries = retries
        while true {
            do {
                return try await client.execute(request, timeout: timeout)
            } catch where retries > 0 && isClosedConnection(error) {
                retries -= 1
            }
        }
    }

    private static func isClosedConnection(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError { return error == .remoteConnectionClosed }
        if let error = error as? IOError { return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE }
        return false
    }

    /// An AsyncHTTPClient body as `Data` chunks.
    private struct ByteBufferChunks: AsyncSequence, Sendable {
        typealias Element = Data
        let base: HTTPClientResponse.Body

        func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator()) }

        struct Iterator: AsyncIteratorProtocol {
            var base: HTTPClientResponse.Body.AsyncIterator

            mutating func next() async throws -> Data? {
                try await base.next().map { Data($0.readableBytesView) }
            }
        }
    }

    private static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]
    private static let commonMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE"]
}
#endif
