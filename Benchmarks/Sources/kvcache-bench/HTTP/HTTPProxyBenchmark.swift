import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore

/// `kvcache-bench http`, through a proxy: fresh hits of 1 KB responses over loopback HTTP
/// (one keep-alive connection, one request at a time), through `kvcache-proxy` and through
/// nginx's `proxy_cache` beside it, against the same requests sent to the origin itself (an
/// in-process Hummingbird server), which costs the HTTP round trip and no cache.
struct HTTPProxyBenchmark: Sendable {
    static let group = "1 KB responses, 1,000 URLs, over loopback HTTP"
    static let urls = 1_000

    var runCount: Int
    var operations: Int
    var workspace: Workspace

    func measure() async throws -> [Comparison] {
        guard HTTPBenchmark.includes("proxied fresh hit") else { return [] }
        let directory = try workspace.makeDirectory("http-proxy")
        defer { workspace.remove(directory) }
        let body = ByteBuffer(repeating: 0x61, count: 1_024)
        let router = Router()
        router.get("/item/:index") { _, _ -> Response in
            Response(status: .ok, headers: [.cacheControl: "max-age=86400", .contentType: "application/octet-stream"],
                     body: ResponseBody(byteBuffer: body))
        }
        let originPort = try OwnRedisServer.freePort()
        let (running, started) = AsyncStream<Void>.makeStream()
        let origin = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: originPort)),
                                 onServerRunning: { _ in started.yield() }, logger: Logger(label: "origin") { _ in SwiftLogNoOpLogHandler() })
        let originTask = Task { try await origin.runService() }
        defer { originTask.cancel() }
        var ready = running.makeAsyncIterator()
        await ready.next()

        var bases: [(String, String, isFloor: Bool)] = [("origin, no cache", "http://127.0.0.1:\(originPort)", true)]
        var notes: [String] = []
        let proxy = try? ProxyProcess.kvcacheProxy(upstream: "http://127.0.0.1:\(originPort)", directory: directory)
        defer { proxy?.stop() }
        if let proxy { bases.append(("kvcache-proxy", proxy.base, false)) } else { notes.append("kvcache-proxy is not built beside kvcache-bench: no row.") }
        let nginx = try? ProxyProcess.nginx(upstream: "http://127.0.0.1:\(originPort)", directory: directory)
        defer { nginx?.stop() }
        if let nginx { bases.append(("nginx proxy_cache", nginx.base, false)) } else { notes.append("nginx is not installed (apt-get install nginx-light): no row.") }
        Progress.log("http: \(operations) requests over loopback per run and strategy, \(runCount) runs")

        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let samples = try await timed(bases, client)
            try await client.shutdown()
            var comparison = Comparison(suite: HTTPBenchmark.suite, group: Self.group, workload: "proxied fresh hit",
                                        operationsPerRun: operations)
            samples.fill(&comparison)
            comparison.notes.append("One AsyncHTTPClient connection, one request at a time; the proxies answer from their caches (every URL fetched once before), the floor is the in-process origin answering itself.")
            comparison.notes += notes
            return [comparison]
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    private func timed(_ bases: [(String, String, isFloor: Bool)], _ client: HTTPClient) async throws -> SampleSet {
        func get(_ base: String, _ index: Int) async throws {
            let response = try await client.execute(HTTPClientRequest(url: "\(base)/item/\(index % Self.urls)"), timeout: .seconds(30))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            guard response.status == .ok, bytes.readableBytes == 1_024 else {
                throw ProxyProcess.Failure("\(base): status \(response.status.code), \(bytes.readableBytes) bytes")
            }
        }
        // Every URL once through each proxy, so the timed requests are fresh hits.
        for (_, base, _) in bases { for index in 0..<Self.urls { try await get(base, index) } }
        var samples = SampleSet()
        for _ in 0..<runCount {
            for (name, base, isFloor) in bases {
                let start = Clock.now()
                for index in 0..<operations { try await get(base, index) }
                samples.record(name, isFloor: isFloor, nanoseconds: Clock.now() - start, operations: operations)
            }
        }
        return samples
    }
}

/// A caching proxy started for the benchmark, in front of the in-process origin.
struct ProxyProcess: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    let base: String
    let stop: @Sendable () -> Void

    static func kvcacheProxy(upstream: String, directory: URL) throws -> ProxyProcess {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("kvcache-proxy").path
        guard FileManager.default.isExecutableFile(atPath: binary) else { throw ProxyProcess.Failure("no kvcache-proxy at \(binary)") }
        let port = try OwnRedisServer.freePort()
        let pid = try spawn(binary, ["--upstream", upstream, "--port", String(port),
                                     "--dir", directory.appendingPathComponent("kvcache-proxy").path])
        try waitUntilListening(port: port)
        return ProxyProcess(base: "http://127.0.0.1:\(port)") {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
    }

    static func nginx(upstream: String, directory: URL) throws -> ProxyProcess {
        guard let binary = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { throw ProxyProcess.Failure("no nginx") }
        let port = try OwnRedisServer.freePort()
        let work = directory.appendingPathComponent("nginx").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        // As the HTTP cache test suite runs it (../shared/cache-tests/run.sh), one worker.
        let configuration = """
            daemon on; pid \(work)/nginx.pid; error_log \(work)/error.log; worker_processes 1;
            events { worker_connections 256; }
            http { access_log off; client_body_temp_path \(work)/body; proxy_temp_path \(work)/proxy;
              proxy_cache_path \(work)/cache levels=1:2 keys_zone=c:8m max_size=1000m inactive=600m;
              server { listen 127.0.0.1:\(port);
                location / { proxy_pass \(upstream); proxy_cache c; proxy_cache_revalidate on; proxy_http_version 1.1; } } }
            """
        try configuration.write(toFile: work + "/nginx.conf", atomically: true, encoding: .utf8)
        // It forks its daemon and exits.
        let starter = try spawn(binary, ["-c", work + "/nginx.conf"])
        var status: Int32 = 0
        waitpid(starter, &status, 0)
        guard status == 0 else { throw ProxyProcess.Failure("nginx did not start (status \(status))") }
        try waitUntilListening(port: port)
        return ProxyProcess(base: "http://127.0.0.1:\(port)") {
            guard let pid = (try? String(contentsOfFile: work + "/nginx.pid", encoding: .utf8))
                .flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else { return }
            kill(pid, SIGTERM)
            // A daemon, not our child: wait until it is gone (or a zombie nobody reaps).
            for _ in 0..<200 where kill(pid, 0) == 0 { usleep(10_000) }
        }
    }

    /// Starts `binary` with `arguments`, its output discarded. (Not Foundation's `Process`:
    /// waiting for one from the benchmark's blocked main thread never returns.)
    static func spawn(_ binary: String, _ arguments: [String]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([binary] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, binary, &actions, nil, argv, environ)
        guard code == 0 else { throw ProxyProcess.Failure("cannot start \(binary): errno \(code)") }
        return pid
    }

    /// Polls until something accepts connections on `port` (at most 30 s).
    static func waitUntilListening(port: Int) throws {
        for _ in 0..<3_000 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if connected { return }
            usleep(10_000)
        }
        throw ProxyProcess.Failure("nothing listens on port \(port)")
    }
}
