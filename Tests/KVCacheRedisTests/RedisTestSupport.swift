import Foundation
import Testing
@testable import KVCache
@testable import KVCacheRedis

/// The servers `.ci/run` starts: `KVCACHE_REDIS_URL` (one server) and `redis-server` on
/// the path (tests that kill, stop or restart a server start their own).
enum RedisTestServer {
    static let url = ProcessInfo.processInfo.environment["KVCACHE_REDIS_URL"]
    static let skipReason: Comment = "KVCACHE_REDIS_URL is not set: start a redis-server and set it to redis://127.0.0.1:PORT"

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
    let port: Int
    private var pid: pid_t?
    private let directory = TemporaryDirectory("server")

    init() throws {
        port = try Self.freePort()
        try start()
    }

    deinit {
        stop()
        directory.remove()
    }

    var address: RedisAddress { RedisAddress(host: "127.0.0.1", port: port) }

    func start() throws {
        let binary = try #require(RedisTestServer.serverBinary)
        let arguments = [binary, "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                         "--dir", directory.url.path, "--logfile", directory.url.path + "/redis.log"]
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
            if Date() > deadline { throw RemoteLevelError(.unavailable, "redis-server on \(port) did not start") }
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

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
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
