import Foundation
import HTTPTypes
import HummingbirdCore
import KVCacheHTTP
import NIOCore

/// The origin a proxy forwards to: its scheme, authority and path prefix.
struct Upstream: Sendable {
    let scheme: String
    let authority: String
    let pathPrefix: String

    init?(_ string: String) {
        guard let components = URLComponents(string: string), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { return nil }
        self.scheme = scheme
        authority = components.port.map { "\(host):\($0)" } ?? host
        pathPrefix = components.percentEncodedPath.hasSuffix("/")
            ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
    }
}

/// Answers each request through the cache, which forwards what it cannot answer upstream.
struct ProxyResponder: Sendable {
    let client: CachingHTTPClient
    let upstream: Upstream
    /// Request bodies larger than this are refused with 502.
    static let bodyLimit = 256 << 20
    /// Bodies up to this size are sent in one piece, with their Content-Length.
    static let inlineBodyLimit = 1 << 20

    /// Fields about one connection, never forwarded (RFC 9110 §7.6.1), and those the client
    /// library sets itself.
    static let notForwarded: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "host",
        "content-length", "proxy-authorization", "trailer",
    ]

    func respond(to request: Request) async -> Response {
        var head = request.head
        // NIO's parser reports M-SEARCH as "MSEARCH" (a method no client can send otherwise).
        if head.method.rawValue == "MSEARCH", let method = HTTPRequest.Method("M-SEARCH") { head.method = method }
        head.scheme = upstream.scheme
        head.authority = upstream.authority
        head.path = upstream.pathPrefix + (head.path ?? "/")
        let requestNominated = Self.nominated(by: head.headerFields)
        head.headerFields = head.headerFields.filter {
            !Self.notForwarded.contains($0.name.canonicalName) && !requestNominated.contains($0.name.canonicalName)
        }
        var body: Data?
        do {
            if head.method != .get && head.method != .head {
                let buffer = try await request.body.collect(upTo: Self.bodyLimit)
                body = Data(buffer.readableBytesView)
            }
            let answer = try await client.executeStreaming(head, body: body)
            let nominated = Self.nominated(by: answer.response.headerFields)
            var fields = answer.response.headerFields.filter {
                !Self.notForwarded.contains($0.name.canonicalName) && !nominated.contains($0.name.canonicalName)
            }
            if head.method == .head, let length = answer.response.headerFields[.contentLength] {
                fields[.contentLength] = length
            }
            // Up to 1 MiB of the body is read first: a body that ends by then goes out in one
            // piece with its Content-Length, as a small response always did; a larger one streams
            // (its buffered start first), never held whole, and is stored as it passes.
            var iterator = answer.body.makeAsyncIterator()
            var start = Data()
            var ended = false
            while start.count <= Self.inlineBodyLimit {
                guard let chunk = try await iterator.next() else {
                    ended = true
                    break
                }
                start.append(chunk)
            }
            let body: ResponseBody
            if ended {
                body = ResponseBody(byteBuffer: ByteBuffer(bytes: start))
            } else {
                let rest = IteratorBox(iterator)
                body = ResponseBody(contentLength: answer.body.knownCount.map { Int($0) }) { [start] writer in
                    try await writer.write(ByteBuffer(bytes: start))
                    while let chunk = try await rest.next() { try await writer.write(ByteBuffer(bytes: chunk)) }
                    try await writer.finish(nil)
                }
            }
            return Response(status: answer.response.status, headers: fields, body: body)
        } catch {
            FileHandle.standardError.write(Data("kvcache-proxy: \(head.method) \(head.path ?? ""): \(error)\n".utf8))
            return Response(status: .badGateway)
        }
    }

    /// The fields a `Connection` header names, which belong to that connection only.
    static func nominated(by fields: HTTPFields) -> Set<String> {
        Set(fields[values: .connection].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
    }
}

/// The rest of a body being streamed, read by the one writer that sends it.
private final class IteratorBox: @unchecked Sendable {
    private var base: HTTPCacheBody.AsyncIterator

    init(_ base: HTTPCacheBody.AsyncIterator) {
        self.base = base
    }

    func next() async throws -> Data? {
        try await base.next()
    }
}
