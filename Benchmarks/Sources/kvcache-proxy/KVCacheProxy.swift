import ArgumentParser
import AsyncHTTPClient
import Foundation
import HummingbirdCore
import HTTPTypes
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import KVCache
import KVCacheHTTP

/// `kvcache-proxy --upstream URL --port N [--dir DIR] [--private]`: a caching reverse proxy
/// on 127.0.0.1 that answers from an ``HTTPCache`` over a two-level `Cache<HTTPCacheRecord>`.
@main
struct KVCacheProxy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvcache-proxy",
        abstract: "A caching reverse proxy (RFC 9111) in front of one upstream, listening on 127.0.0.1.")

    @Option(help: "The origin's base URL, e.g. http://127.0.0.1:8080.")
    var upstream: String

    @Option(help: "The loopback port to listen on (0: any free port, logged once it listens).")
    var port: Int

    @Option(help: "The cache's directory (default: a new temporary directory, removed at exit).")
    var dir: String?

    @Flag(name: .customLong("private"), help: "Act as one client's private cache instead of a shared one.")
    var isPrivate = false

    @Option(help: "The memory level's limit, in entries.")
    var memoryEntries = 10_000

    @Option(name: .customLong("max-body-mib"),
            help: "The largest response body stored, in MiB (bodies stream to and from disk; larger ones pass through).")
    var maxBodyMiB = 1_024

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be within 0...65535") }
        guard memoryEntries >= 1 else { throw ValidationError("--memory-entries must be at least 1") }
        guard (1...(1 << 20)).contains(maxBodyMiB) else { throw ValidationError("--max-body-mib must be within 1...1048576") }
        guard Upstream(upstream) != nil else {
            throw ValidationError("--upstream must be an http:// or https:// URL with a host, e.g. http://127.0.0.1:8080")
        }
    }

    func run() async throws {
        let upstream = Upstream(self.upstream)!
        let temporary = dir == nil
        let directory = dir.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-proxy-\(UUID().uuidString)")
        var configuration = Cache<HTTPCacheRecord>.Configuration()
        configuration.memory.countLimit = memoryEntries
        let storage = try Cache(directory: directory, coder: HTTPCacheRecordCoder(), configuration: configuration)
        defer {
            try? storage.close()
            if temporary { try? FileManager.default.removeItem(at: directory) }
        }
        let http = try HTTPCache(storage: storage, configuration: .init(
            mode: isPrivate ? .private : .shared, maximumBodySize: maxBodyMiB << 20))
        var clientConfiguration = HTTPClient.Configuration(redirectConfiguration: .disallow, decompression: .disabled)
        // Idle connections close before a typical server's keep-alive timeout (5 s in Node,
        // nginx's 75 s), so a request is rarely sent on a connection the server is closing.
        clientConfiguration.connectionPool = .init(idleTimeout: .seconds(3))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        let responder = ProxyResponder(
            client: try CachingHTTPClient(client: client, cache: http, timeout: .seconds(60),
                                          maximumResponseBodySize: ProxyResponder.bodyLimit),
            upstream: upstream)
        // HummingbirdCore's server rather than Hummingbird's Application, which would replace
        // the Date of every response, stored ones included (RFC 9110 §6.6.1: a cache keeps it).
        let server = try HTTPServerBuilder.http1().buildServer(
            configuration: .init(address: .hostname("127.0.0.1", port: port)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: Logger(label: "kvcache-proxy"),
            responder: { (request: Request, writer: consuming ResponseWriter, _: any Channel) in
                let response = await responder.respond(to: request)
                try await writer.write(
                    response: HTTPResponse(status: response.status, headerFields: response.headers), body: response.body)
            })
        // SIGTERM and SIGINT stop it gracefully, so the store is closed and a temporary
        // directory removed (the deferred block above) rather than left behind.
        let services = ServiceGroup(configuration: .init(
            services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: Logger(label: "kvcache-proxy")))
        do {
            try await services.run()
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}
