import Foundation
import KVCacheRedis
#if canImport(Glibc)
import Glibc
#endif

/// The redis-server `kvcache-bench remote` starts when no `--redis` is given: on a free
/// loopback port, no persistence, its files in the workspace. The suite may stop it
/// (SIGSTOP), resume it and kill it; it is killed at the end in any case.
final class OwnRedisServer {
    let port: Int
    let version: String
    private var process: ChildProcess

    var address: RedisAddress { RedisAddress(host: "127.0.0.1", port: port) }
    var url: String { "redis://127.0.0.1:\(port)" }

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts `redis-server` from PATH and waits (up to 10 s) until it answers PING.
    init(directory: URL) throws {
        guard let binary = ChildProcess.find("redis-server") else {
            throw Unavailable(description: "redis-server is not on PATH (apt-get install redis-server), "
                + "and no --redis URL was given")
        }
        self.binary = binary
        self.directory = directory
        port = try Self.freePort()
        process = try Self.start(binary, port: port, directory: directory)
        let info = (try? RawRedis(address: RedisAddress(host: "127.0.0.1", port: port), timeout: 1))
            .flatMap { try? $0.command(["INFO", "server"]).text }
        version = Self.field("redis_version", in: info ?? "") ?? "?"
    }

    private let binary: String
    private let directory: URL

    /// Spawns the server and waits until it answers PING.
    private static func start(_ binary: String, port: Int, directory: URL) throws -> ChildProcess {
        let process = try ChildProcess(binary, [
            "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", directory.path, "--logfile", directory.appendingPathComponent("redis.log").path,
        ], pipes: false)
        let deadline = Clock.now() + 10_000_000_000
        while true {
            if let connection = try? RawRedis(address: RedisAddress(host: "127.0.0.1", port: port), timeout: 1),
               (try? connection.command(["PING"])) == .status("PONG") {
                return process
            }
            if Clock.now() > deadline {
                process.kill()
                throw Unavailable(description: "redis-server on port \(port) did not answer within 10 s "
                    + "(see \(directory.path)/redis.log)")
            }
            usleep(5_000)
        }
    }

    /// Starts the server again on the same port (empty: it keeps nothing) after `kill()`.
    func restart() throws {
        process.kill()
        process = try Self.start(binary, port: port, directory: directory)
    }

    deinit {
        process.kill()
    }

    /// SIGSTOP: the server hangs with its sockets open (connections succeed, nothing answers).
    func pause() { process.signal(SIGSTOP) }
    /// SIGCONT.
    func resume() { process.signal(SIGCONT) }
    /// SIGKILL: connections are refused from now on.
    func kill() { process.kill() }

    /// `field:value` from an INFO text.
    static func field(_ name: String, in info: String) -> String? {
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix(name + ":") {
            return String(line.dropFirst(name.count + 1))
        }
        return nil
    }

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
        guard bound else { throw Unavailable(description: "no free loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
