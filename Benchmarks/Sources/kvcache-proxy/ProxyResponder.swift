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
    /// Bodies up to this size whose size is known are sent in one piece.
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
            // The body streams through: a large one is never held whole, and it is stored (when
            // allowed) as it passes.
            let body: ResponseBody
            let status = answer.response.status.code
            if (answer.body.knownCount ?? .max) <= Self.inlineBodyLimit || status == 204 || status == 304 {
                body = ResponseBody(byteBuffer: ByteBuffer(bytes: try await answer.body.collect()))
            } else {
                let chunks = answer.body
                body = ResponseBody(contentLength: chunks.knownCount.map { Int($0) }) { writer in
                    for try await chunk in chunks { try await writer.write(ByteBuffer(bytes: chunk)) }
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
