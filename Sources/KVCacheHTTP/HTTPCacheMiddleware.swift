#if OpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization

/// A swift-openapi-runtime `ClientMiddleware` that answers an OpenAPI client's requests from
/// an ``HTTPCache`` and stores what the server sends back (package trait `OpenAPI`).
///
/// ```swift
/// let client = Client(serverURL: url, transport: AsyncHTTPClientTransport(),
///                     middlewares: [HTTPCacheMiddleware(cache: http)])
/// ```
///
/// Response bodies of GET requests are collected (up to the cache's `maximumBodySize`; a body
/// that says it is larger passes through unstored). `stale-while-revalidate` revalidates
/// before answering, since the middleware's `next` may not be used after it returns.
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
        let limit = cache.configuration.maximumBodySize
        let passedThrough = PassedThrough()
        let answer = try await withoutActuallyEscaping(next) { next in
            try await cache.response(for: full, body: nil, revalidatesInBackground: false) { sent, _ in
                // The cache adds its conditional fields; the path stays relative to baseURL.
                var forwarded = sent
                forwarded.scheme = request.scheme
                forwarded.authority = request.authority
                forwarded.path = request.path
                let (response, responseBody) = try await next(forwarded, nil, baseURL)
                guard let responseBody else { return (response, Data()) }
                if case .known(let length) = responseBody.length, length > limit {
                    passedThrough.set(response, responseBody)
                    // An empty 502 is never stored; the caller gets the streaming original.
                    return (HTTPResponse(status: .badGateway), Data())
                }
                return (response, try await Data(collecting: responseBody, upTo: limit))
            }
        }
        if let original = passedThrough.value { return original }
        if request.method == .head { return (answer.response, nil) }
        return (answer.response, HTTPBody(answer.body))
    }
}

/// A response too large to store, handed back to the caller as it came.
private final class PassedThrough: Sendable {
    private let stored = Mutex<(HTTPResponse, HTTPBody?)?>(nil)

    var value: (HTTPResponse, HTTPBody?)? { stored.withLock { $0 } }

    func set(_ response: HTTPResponse, _ body: HTTPBody) {
        stored.withLock { $0 = (response, body) }
    }
}
#endif
