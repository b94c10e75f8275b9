import Foundation
import Testing
@testable import KVCache
@testable import KVCacheRedis

/// The servers `scripts/test` (and `.ci/run`) start: `KVCACHE_REDIS_URL` (one server) and `redis-server` on
/// the path (tests that kill, stop or restart a server start their own).
enum RedisTestServer {
    static let url = ProcessInfo.processInfo.environment["KVCACHE_REDIS_URL"]
    static let skipReason: Comment = "KVCACHE_REDIS_URL is not set: run scripts/test, which starts a redis-server, or start one and set it to redis://127.0.0.1:PORT"

    static let serverBinary: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/redis-server" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    static let canStartServers = url != nil && serverBinary != nil

    static var address: RedisAddress {
        get throws { try RedisAddress(try #require(url)) }
    }

    /// A namespace no other test uses (tests share the server and run in parallel).
    static func uniqueNamespace(_ label: String = #function) -> String {
        let cleaned = label.prefix(40).filter { $0.isLetter || $0.isNumber }
        return "t-\(cleaned)-\(UInt32.random(in: 0 ... .max))"
    }

    static func level(namespace: String, address: RedisAddress? = nil,
                      _ configure: (inout RedisLevel.Configuration) -> Void = { _ in }) throws -> RedisLevel {
        var configuration = RedisLevel.Configuration(address: try address ?? self.address, namespace: namespace)
        configuration.withTestTimeouts()
        configure(&configuration)
        return try RedisLevel(configuration: configuration)
    }

    /// A raw connection to the server, to look at and plant keys as another program would.
    static func raw(_ address: RedisAddress? = nil) throws -> RedisConnection {
        try RedisConnection(address: try address ?? self.address, connectTimeout: .seconds(2), commandTimeout: .seconds(5))
    }
}

extension RedisConnection {
    /// Runs a command given as strings.
    @discardableResult
    func run(_ arguments: String...) throws -> RedisReply {
        try command(arguments.map { Data($0.utf8) })
    }
}

/// A temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let url: URL

    init(_ label: String = #function) {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("kvcache-redis-\(label.prefix(30).filter { $0.isLetter })-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// A redis-server of the test's own, on a free loopback port, that the test may kill,
/// stop and restart. Stopped with SIGKILL by `stop()` or when released.
final class OwnRedisServer: @unchecked Sendable {
    private(set) var port: Int
    private var pid: pid_t?
    private let directory = TemporaryDirectory("server")

    private let extraArguments: [String]

    /// A cluster node (`clusterNode`) also listens on its port + 10,000 (the cluster bus).
    init(extraArguments: [String] = [], clusterNode: Bool = false) throws {
        port = try clusterNode ? Self.freeClusterPort() : Self.freeServerPort()
        self.extraArguments = extraArguments
        // A port found free can be taken before the server binds it (by another test's
        // server, picked at random at the same moment): the server exits, and a new port
        // is tried.
        var attempts = 1
        while true {
            do {
                try start()
                return
            } catch ServerStart.exited where attempts < 5 {
                attempts += 1
                port = try clusterNode ? Self.freeClusterPort() : Self.freeServerPort()
            }
        }
    }

    /// Why `start()` failed.
    enum ServerStart: Error, CustomStringConvertible {
        /// The server exited (its log's end says why).
        case exited(log: String)
        /// It did not answer within 10 s.
        case silent(port: Int)

        var description: String {
            switch self {
            case .exited(let log): "redis-server exited at start: \(log)"
            case .silent(let port): "redis-server on \(port) did not start"
            }
        }
    }

    deinit {
        stop()
        directory.remove()
    }

    var address: RedisAddress { RedisAddress(host: "127.0.0.1", port: port) }

    func start() throws {
        let binary = try #require(RedisTestServer.serverBinary)
        let arguments = [binary, "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                         "--dir", directory.url.path, "--logfile", directory.url.path + "/redis.log"] + extraArguments
        var child: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let status = posix_spawn(&child, binary, nil, nil, argv, environ)
        guard status == 0 else { throw RemoteLevelError(.unavailable, "posix_spawn redis-server: \(status)") }
        pid = child
        // Until it answers (it starts in milliseconds; a server that never does fails here).
        let deadline = Date(timeIntervalSinceNow: 10)
        while true {
            if let connection = try? RedisConnection(address: address, connectTimeout: .milliseconds(100),
                                                     commandTimeout: .seconds(1)),
               (try? connection.run("PING")) == .status("PONG") { return }
            var status: Int32 = 0
            if waitpid(child, &status, WNOHANG) == child {
                pid = nil
                let log = (try? String(contentsOfFile: directory.url.path + "/redis.log", encoding: .utf8)) ?? ""
                throw ServerStart.exited(log: String(log.suffix(500)))
            }
            if Date() > deadline { throw ServerStart.silent(port: port) }
            usleep(5_000)
        }
    }

    /// kill -9, and waits for the process to end.
    func kill9() {
        guard let pid else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        self.pid = nil
    }

    func stop() {
        resume()
        kill9()
    }

    /// SIGSTOP: the server hangs, its sockets open.
    func pause() { if let pid { kill(pid, SIGSTOP) } }
    /// SIGCONT.
    func resume() { if let pid { kill(pid, SIGCONT) } }

    /// A free port whose cluster bus port (+10,000) is free too.
    static func freeClusterPort() throws -> Int {
        for _ in 0..<1000 {
            let port = Int.random(in: 20_000..<45_000)
            if (try? freePort(port)) != nil, (try? freePort(port + 10_000)) != nil { return port }
        }
        throw RemoteLevelError(.unavailable, "no free cluster port")
    }

    /// A free port below the system's ephemeral range (32,768 and up), so that no client
    /// socket takes it while a test has its server stopped for a restart.
    static func freeServerPort() throws -> Int {
        for _ in 0..<1000 {
            let port = Int.random(in: 20_000..<32_000)
            if (try? freePort(port)) != nil { return port }
        }
        throw RemoteLevelError(.unavailable, "no free server port")
    }

    /// A port the system picks (0), or `port` if it is free.
    static func freePort(_ port: Int = 0) throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw RemoteLevelError(.unavailable, "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// `count` bytes following a pattern picked by `seed`.
func bytes(_ count: Int, seed: UInt8 = 1) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
}

/// The Redis Cluster `scripts/test` (and `.ci/run`) start: `KVCACHE_REDIS_CLUSTER`, its nodes' `host:port`
/// separated by commas.
enum RedisTestCluster {
    static let nodesText = ProcessInfo.processInfo.environment["KVCACHE_REDIS_CLUSTER"]
    static let skipReason: Comment = "KVCACHE_REDIS_CLUSTER is not set: run scripts/test, which starts one, or start a Redis Cluster of three masters and set it to host:port,host:port,host:port"

    static let cliBinary: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/redis-cli" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Tests that start a cluster of their own need redis-server and redis-cli too.
    static let canStartClusters = nodesText != nil && RedisTestServer.serverBinary != nil && cliBinary != nil

    static var nodes: [RedisAddress] {
        get throws { try #require(nodesText).split(separator: ",").map { try RedisAddress(String($0)) } }
    }

    static func level(namespace: String, nodes: [RedisAddress]? = nil,
                      _ configure: (inout RedisLevel.Configuration) -> Void = { _ in }) throws -> RedisLevel {
        var configuration = RedisLevel.Configuration(cluster: try nodes ?? self.nodes, namespace: namespace)
        configuration.withTestTimeouts()
        configure(&configuration)
        return try RedisLevel(configuration: configuration)
    }

    /// Raw connections to each node, keyed by address.
    static func rawNodes(_ nodes: [RedisAddress]) throws -> [RedisAddress: RedisConnection] {
        var connections: [RedisAddress: RedisConnection] = [:]
        for node in nodes { connections[node] = try RedisTestServer.raw(node) }
        return connections
    }
}

/// A Redis Cluster of the test's own: three masters with a replica each, on free loopback
/// ports, whose nodes a test may kill. Every node is killed when it is released.
final class OwnRedisCluster: @unchecked Sendable {
    let servers: [OwnRedisServer]

    init(masters: Int = 3, replicasPerMaster: Int = 1) throws {
        servers = try (0..<(masters * (1 + replicasPerMaster))).map { _ in
            try OwnRedisServer(extraArguments: ["--cluster-enabled", "yes", "--cluster-node-timeout", "1000",
                                                "--cluster-config-file", "nodes.conf"], clusterNode: true)
        }
        let cli = try #require(RedisTestCluster.cliBinary)
        let create = [cli, "--cluster", "create"] + servers.map { "127.0.0.1:\($0.port)" }
            + ["--cluster-replicas", "\(replicasPerMaster)", "--cluster-yes"]
        try #require(runQuietly(create) == 0, "redis-cli --cluster create failed")
        // Until every node sees every slot served and every replica is in sync.
        try waitUntil(timeout: 30, "the cluster did not come up") {
            try servers.allSatisfy(isUp) && replicasInSync()
        }
    }

    /// Whether the node says the cluster is up (every slot served).
    func isUp(_ server: OwnRedisServer) throws -> Bool {
        let info = try RedisTestServer.raw(server.address).run("CLUSTER", "INFO").data ?? Data()
        return String(decoding: info, as: UTF8.self).contains("cluster_state:ok")
    }

    var addresses: [RedisAddress] { servers.map(\.address) }

    /// The role (`master` or `slave`) a node reports.
    func role(of server: OwnRedisServer) throws -> String {
        guard case .array(let parts) = try RedisTestServer.raw(server.address).run("ROLE"), let role = parts.first?.data else {
            return "?"
        }
        return String(decoding: role, as: UTF8.self)
    }

    /// Whether every replica reports its link to its master up.
    func replicasInSync() throws -> Bool {
        try servers.allSatisfy { server in
            guard try role(of: server) == "slave" else { return true }
            let info = String(decoding: try RedisTestServer.raw(server.address).run("INFO", "replication").data ?? Data(),
                              as: UTF8.self)
            return info.contains("master_link_status:up")
        }
    }

    /// The node serving `slot`, as a live node says.
    func master(ofSlot slot: Int, askingAnyOf nodes: [OwnRedisServer]) throws -> RedisAddress? {
        for node in nodes {
            guard let reply = try? RedisTestServer.raw(node.address).run("CLUSTER", "SLOTS"),
                  let map = try? ClusterSlotMap(slotsReply: reply, answering: node.address) else { continue }
            return map.primary(forSlot: slot)
        }
        return nil
    }
}

/// Polls an outside process's state (a server starting, a cluster failing over) until
/// `condition` holds; throws after `timeout` seconds.
func waitUntil(timeout: Double, _ message: String, _ condition: () throws -> Bool) throws {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while !((try? condition()) ?? false) {
        if Date() > deadline { throw RemoteLevelError(.unavailable, message) }
        usleep(20_000)
    }
}

/// Runs a program to its end with its output discarded; returns its exit status.
func runQuietly(_ arguments: [String]) -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var child: pid_t = 0
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    guard posix_spawn(&child, arguments[0], &actions, nil, argv, environ) == 0 else { return -1 }
    var status: Int32 = 0
    while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
}

extension RedisLevel.Configuration {
    /// Timeouts that a loaded machine (a parallel test run, sanitizers) does not trip: the
    /// defaults (250 ms) would turn a slow moment into a counted failure and an open breaker.
    /// Tests of timeouts set their own.
    mutating func withTestTimeouts() {
        connectTimeout = .seconds(5)
        commandTimeout = .seconds(5)
    }
}

/// Runs `body` on a thread of its own and returns its result: a test that blocks for seconds
/// on outside processes (servers it kills, stops and restarts; a cluster failing over; a
/// child process) must not hold one of the few threads the other tests' async work needs.
func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result(catching: body)) }.start()
    }
}
