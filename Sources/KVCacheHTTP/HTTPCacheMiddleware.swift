#if OpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// A swift-openapi-runtime `ClientMiddleware` that answers an OpenAPI client's requests from
/// an ``HTTPCache`` and stores what the server sends back (package trait `OpenAPI`).
///
/// ```swift
/// let client = Client(serverURL: url, transport: AsyncHTTPClientTransport(),
///                     middlewares: [HTTPCacheMiddleware(cache: http)])
/// ```
///
/// Response bodies stream through: a large stored body is read from its file, and the
/// server's body is passed on as it arrives and stored on the way once read to its end.
/// `stale-while-revalidate` revalidates before answering, since the middleware's `next` may
/// not be used after it returns.
public struct HTTPCacheMiddleware: ClientMiddleware {
    /// The cache that answers and stores.
    public let cache: HTTPCache

    /// A middleware that answers from `cache`.
    public init(cache: HTTPCache) {
        self.cache = cache
    }

    /// Answers GET and HEAD from the cache or through `next`, storing what may be stored;
    /// passes other methods to `next` and invalidates what a success changed.
    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
              let scheme = components.scheme, let host = components.host
        else { return try await next(request, body, baseURL) }
        var full = request
        full.scheme = scheme
        full.authority = components.port.map { "\(host):\($0)" } ?? host
        let basePath = components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        full.path = basePath + (request.path ?? "/")

        if request.method != .get && request.method != .head {
            let (response, responseBody) = try await next(request, body, baseURL)
            if (200..<400).contains(response.status.code), let key = cache.key(for: full) {
                await cache.invalidate(after: full, key: key, response: response)
            }
            return (response, responseBody)
        }
        let answer = try await withoutActuallyEscaping(next) { next in
            try await cache.streamingResponse(for: full, body: nil, revalidatesInBackground: false) { sent, _ in
                // The cache adds its conditional fields; the path stays relative to baseURL.
                var forwarded = sent
                forwarded.scheme = request.scheme
                forwarded.authority = request.authority
                forwarded.path = request.path
                let (response, responseBody) = try await next(forwarded, nil, baseURL)
                guard let responseBody else { return (response, .empty) }
                return (response, HTTPCacheBody(DataChunks(base: responseBody)))
            }
        }
        if request.method == .head { return (answer.response, nil) }
        let length: HTTPBody.Length = answer.body.knownCount.map { .known($0) } ?? .unknown
        return (answer.response, HTTPBody(ByteChunks(base: answer.body), length: length, iterationBehavior: .single))
    }
}

/// An OpenAPI body as `Data` chunks.
private struct DataChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let base: HTTPBody

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator()) }

    struct Iterator: AsyncIteratorProtocol {
        var base: HTTPBody.AsyncIterator

        mutating func next() async throws -> Data? {
            try await base.next().map { Data($0) }
        }
    }
}

/// A cache body as OpenAPI's byte chunks.
private struct ByteChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let base: HTTPCacheBody

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator()) }

    struct Iterator: AsyncIteratorProtocol {
        var base: HTTPCacheBody.AsyncIterator

        mutating func next() async throws -> ArraySlice<UInt8>? {
            try await base.next().map { ArraySlice($0) }
        }
    }
}
#endif
