#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import HTTPTypes
import KVCache
@testable import KVCacheHTTP
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import Testing

/// CachingHTTPClient against a real HTTP server on loopback, through a real AsyncHTTPClient.
/// One test at a time: the test of connections the origin closes depends on timing, which the
/// 100 MB streaming test (nested, in a child process) would upset.
@Suite(.serialized) struct CachingHTTPClientTests {
    @Test func aFreshResponseIsServedWithoutAskingTheOriginAgain() async throws {
        let origin = try await NIOOrigin { request in
            (.ok, ["Cache-Control": "max-age=60"], "item \(request.uri)")
        }
        let (client, fixture) = try Self.make()
        defer { fixture.remove() }

        let first = try await client.execute(origin.request("/items?page=2"))
        let second = try await client.execute(origin.request("/items?page=2"))
        let other = try await client.execute(origin.request("/items?page=3"))

        #expect(first.outcome == .miss && second.outcome == .hit)
        #expect(second.text == "item /items?page=2" && second.response.status == .ok)
        #expect(second.response.headerFields[.age] != nil)
        #expect(other.outcome == .miss && other.text == "item /items?page=3", "the query is part of the key")
        #expect(origin.requests.count == 2)
        try await client.shutdown()
        try await origin.stop()
    }

    @Test func aStaleResponseIsRevalidatedWithItsETagAndA304KeepsItsBody() async throws {
        let origin = try await NIOOrigin { request in
            if request.headers["If-None-Match"] == ["\"v1\""] {
                return (.notModified, ["ETag": "\"v1\"", "Cache-Control": "max-age=0"], "")
            }
            return (.ok, ["ETag": "\"v1\"", "Cache-Control": "max-age=0"], "version 1")
        }
        let (client, fixture) = try Self.make()
        defer { fixture.remove() }

        let first = try await client.execute(origin.request("/doc"))
        let second = try await client.execute(origin.request("/doc"))

        #expect(first.outcome == .miss)
        #expect(second.outcome == .revalidated && second.text == "version 1" && second.response.status == .ok)
        #expect(origin.requests.map { $0.headers["If-None-Match"] } == [[], ["\"v1\""]])
        try await client.shutdown()
        try await origin.stop()
    }

    @Test func aPostInvalidatesTheStoredResponseAndItsBodyReachesTheOrigin() async throws {
        let origin = try await NIOOrigin { request in
            (.ok, ["Cache-Control": "max-age=60"], request.method == .POST ? "posted \(request.body)" : "list")
        }
        let (client, fixture) = try Self.make()
        defer { fixture.remove() }

        _ = try await client.execute(origin.request("/list"))
        let posted = try await client.execute(origin.request("/list", method: .post), body: Data("new".utf8))
        let after = try await client.execute(origin.request("/list"))

        #expect(posted.outcome == .passedThrough && posted.text == "posted new")
        #expect(after.outcome == .miss)
        #expect(origin.requests.count == 3)
        try await client.shutdown()
        try await origin.stop()
    }

    /// An origin that closes idle connections closes a burst's together (as servers with a
    /// keep-alive timeout do): a GET goes out again past every pooled connection the origin
    /// has closed. (Two retries, as before, failed here with four.)
    @Test func aGetIsSentAgainPastEveryPooledConnectionTheOriginClosed() async throws {
        let origin = try await NIOOrigin(closesKeptConnections: true) { _ in (.ok, ["Cache-Control": "no-store"], "answer") }
        let (client, fixture) = try Self.make()
        defer { fixture.remove() }

        var failure: (any Error)?
        do {
            // Four at once: four connections, each answered once and kept in the pool.
            try await withThrowingTaskGroup(of: HTTPCacheResponse.self) { group in
                for index in 0..<4 { group.addTask { try await client.execute(origin.request("/burst/\(index)")) } }
                for try await answer in group { #expect(answer.text == "answer") }
            }
            let answer = try await client.execute(origin.request("/after"))
            #expect(answer.outcome == .miss && answer.text == "answer")
        } catch {
            failure = error
        }
        #expect(origin.requests.count == 5)
        try await client.shutdown()
        try await origin.stop()
        if let failure { throw failure }
    }

    /// An origin that closes a kept-alive connection as the next request arrives on it: a GET
    /// goes out again on a new connection (RFC 9110 §9.2.2); a POST is not repeated.
    @Test func aSafeRequestOnAConnectionTheOriginClosesIsSentAgainAndAPostIsNot() async throws {
        let origin = try await NIOOrigin(closesKeptConnections: true) { request in
            (.ok, ["Cache-Control": "no-store"], request.method == .POST ? "posted" : "answer")
        }
        let (client, fixture) = try Self.make()
        defer { fixture.remove() }

        // Shut down before a failure is thrown: a client dropped without it traps.
        var failure: (any Error)?
        do {
            for _ in 0..<3 {
                let answer = try await client.execute(origin.request("/a"))
                #expect(answer.outcome == .miss && answer.text == "answer")
            }
        } catch {
            failure = error
        }
        // The close is seen as a clean close or, when the POST is written before it lands, as
        // a reset: either way the POST fails, and is not sent again.
        let error = await #expect(throws: (any Error).self) {
            try await client.execute(origin.request("/list", method: .post), body: Data("new".utf8))
        }
        #expect((error as? HTTPClientError) == .remoteConnectionClosed || (error as? IOError)?.errnoCode == ECONNRESET,
                "\(String(describing: error))")
        // Each answered request had a connection of its own; the POST was sent once, unanswered.
        #expect(origin.requests.count == 3)
        try await client.shutdown()
        try await origin.stop()
        if let failure { throw failure }
    }

    @Test func aBodyOverTheLimitThrowsAndNothingIsStored() async throws {
        let origin = try await NIOOrigin { _ in (.ok, ["Cache-Control": "max-age=60"], String(repeating: "x", count: 1_000)) }
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let client = try CachingHTTPClient(cache: fixture.cache, maximumResponseBodySize: 999)

        await #expect(throws: NIOTooManyBytesError.self) { try await client.execute(origin.request("/big")) }
        let key = HTTPCache.key(scheme: "http", authority: origin.authority, path: "/big")
        #expect(try await fixture.storage.value(forKey: key) == nil)
        try await client.shutdown()
        try await origin.stop()
    }

    @Test func anUnreachableOriginThrowsUnlessAStoredResponseMayServe() async throws {
        let origin = try await NIOOrigin { _ in (.ok, ["Cache-Control": "max-age=0", "ETag": "\"a\""], "kept") }
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        // AsyncHTTPClient retries a refused connection until its connect timeout (10 s).
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(
            redirectConfiguration: .disallow, timeout: .init(connect: .milliseconds(200))))
        let client = try CachingHTTPClient(
            client: http, cache: HTTPCache(storage: fixture.storage, configuration: .init(mode: .shared)))
        let stored = origin.request("/kept")
        _ = try await client.execute(stored)
        try await origin.stop()

        let stale = try await client.execute(stored)
        #expect(stale.outcome == .staleHit && stale.text == "kept")
        await #expect(throws: (any Error).self) { try await client.execute(origin.request("/never-stored")) }
        try await http.shutdown()
    }

    @Test func badSettingsAndRequestsWithoutAURLThrowInvalidArgument() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        for (timeout, limit) in [(TimeAmount.zero, 1), (.seconds(-1), 1), (.seconds(1), 0), (.seconds(1), -5)] {
            #expect(throws: KVCacheError.self) {
                try CachingHTTPClient(client: .shared, cache: fixture.cache, timeout: timeout, maximumResponseBodySize: limit)
            }
        }
        let noAuthority = HTTPRequest(method: .get, scheme: "http", authority: nil, path: "/")
        await #expect(throws: KVCacheError.self) {
            try await CachingHTTPClient.send(noAuthority, body: nil, with: .shared, timeout: .seconds(1),
                                             maximumResponseBodySize: 1)
        }
    }

    /// A client over a fresh shared cache in a temporary directory, with the real clock.
    static func make() throws -> (CachingHTTPClient, HTTPCacheFixture) {
        let fixture = try HTTPCacheFixture()
        let client = try CachingHTTPClient(cache: HTTPCache(storage: fixture.storage, configuration: .init(mode: .shared)))
        return (client, fixture)
    }
}

/// An HTTP/1.1 server on a free loopback port that answers each request with what the test's
/// handler returns (plus `Date` and `Content-Length`), and records what it received.
final class NIOOrigin: Sendable {
    struct Received: Sendable {
        var method: NIOHTTP1.HTTPMethod
        var uri: String
        var headers: HTTPHeaders
        var body: String
    }

    typealias Handler = @Sendable (Received) -> (HTTPResponseStatus, HTTPHeaders, String)

    /// What the server's connections share with the test.
    private final class Log: Sendable {
        let received = Mutex<[Received]>([])
        let connections = Mutex<[any Channel]>([])
    }

    private let channel: any Channel
    private let log = Log()
    let authority: String

    var requests: [Received] { log.received.withLock { $0 } }

    /// `closesKeptConnections`: each connection is answered once, then closed when its next
    /// request arrives, unanswered (as a server closes an idle connection as a request comes).
    init(closesKeptConnections: Bool = false, _ handler: @escaping Handler) async throws {
        let log = log
        channel = try await Self.listen { channel in
            log.connections.withLock { $0.append(channel) }
            return OriginHandler(closesKeptConnection: closesKeptConnections) { request in
                log.received.withLock { $0.append(request) }
                return handler(request)
            }
        }
        authority = "127.0.0.1:\(channel.localAddress!.port!)"
    }

    func request(_ path: String, method: HTTPRequest.Method = .get) -> HTTPRequest {
        HTTPRequest(method: method, scheme: "http", authority: authority, path: path)
    }

    /// An HTTP/1.1 server on a free loopback port whose connections each get the handler
    /// `makeHandler` makes.
    static func listen(_ makeHandler: @escaping @Sendable (any Channel) -> any ChannelHandler) async throws -> any Channel {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(makeHandler(channel))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    /// Stops listening and closes every connection: the origin is then unreachable.
    func stop() async throws {
        try await channel.close()
        for connection in log.connections.withLock({ $0 }) { try? await connection.close() }
    }
}

private final class OriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let handler: NIOOrigin.Handler
    private let closesKeptConnection: Bool
    private var request: NIOOrigin.Received?
    private var answered = 0

    init(closesKeptConnection: Bool, _ handler: @escaping NIOOrigin.Handler) {
        self.closesKeptConnection = closesKeptConnection
        self.handler = handler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if closesKeptConnection && answered > 0 {
                context.close(promise: nil)
                return
            }
            request = .init(method: head.method, uri: head.uri, headers: head.headers, body: "")
        case .body(let bytes):
            request?.body += String(buffer: bytes)
        case .end:
            guard let request else { return }
            var (status, headers, body) = handler(request)
            if status == .notModified || request.method == .HEAD { body = "" }
            headers.replaceOrAdd(name: "Date", value: HTTPDate.format(Date().timeIntervalSince1970))
            headers.replaceOrAdd(name: "Content-Length", value: String(body.utf8.count))
            let head = HTTPResponseHead(version: .http1_1, status: status, headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if !body.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            self.request = nil
            answered += 1
        }
    }
}
#endif
