#if Hummingbird
import Foundation
import KVCacheTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real child process serving the persist routes with a KVCachePersistDriver
/// (Sources/KVCacheHummingbirdTestApp) on a cache directory, on a loopback port it reports.
final class AppProcess: @unchecked Sendable {
    let pid: pid_t
    private(set) var port = 0
    private let output: Int32
    private var buffer: [UInt8] = []
    private var lines: [String] = []

    enum Failure: Error, CustomStringConvertible {
        case noPort(output: [String])
        var description: String {
            switch self {
            case .noPort(let output): return "the app exited without reporting a port; it printed: \(output)"
            }
        }
    }

    /// Starts the app on `directory` and waits until it listens (it is killed if it has not
    /// within 60 s, so this returns).
    init(directory: URL) async throws {
        let executable = try WorkerProcessSupport.executablePath(named: "KVCacheHummingbirdTestApp")
        (pid, output) = try {
            var fds: [Int32] = [0, 0]
            // Close-on-exec from the start (pipe2 is not exported to Swift): a child another
            // test spawns meanwhile must not inherit our write end, or this stream would
            // never reach end of file.
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw WorkerProcessSupport.Failure.spawn(errno) }
            let pid: pid_t
            do {
                pid = try WorkerProcessSupport.spawn(executable, arguments: [directory.path], redirections: [(fds[1], 1)])
            } catch {
                fds.forEach { close($0) }
                throw error
            }
            close(fds[1])
            return (pid, fds[0])
        }()
        let pid = pid
        let watchdog = DispatchWorkItem { _ = Glibc.kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        let line = await readLine(until: { $0.hasPrefix("port ") })
        watchdog.cancel()
        guard let line, let port = Int(line.dropFirst(5)), port > 0 else {
            _ = Glibc.kill(pid, SIGKILL)
            _ = WorkerProcessSupport.waitForExit(of: pid)
            throw Failure.noPort(output: lines)
        }
        self.port = port
    }

    deinit { close(output) }

    /// Reads lines on a thread of its own until one satisfies `condition` (returned), or
    /// end of file (nil).
    func readLine(until condition: @escaping @Sendable (String) -> Bool) async -> String? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                while let line = self.nextLine() {
                    self.lines.append(line)
                    if condition(line) { return continuation.resume(returning: line) }
                }
                continuation.resume(returning: nil)
            }
        }
    }

    private func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Asks the app to shut down gracefully (SIGTERM) and waits for it: whether it printed
    /// "stopped" after its services (the driver) shut down, and its exit code.
    func stop() async -> (stopped: Bool, exitCode: Int32) {
        _ = Glibc.kill(pid, SIGTERM)
        let stopped = await readLine(until: { $0 == "stopped" }) != nil
        let pid = pid
        let code = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: WorkerProcessSupport.waitForExit(of: pid)) }
        }
        return (stopped, code)
    }

    /// Kills the app at once (for cleanup after a failure).
    func kill() {
        _ = Glibc.kill(pid, SIGKILL)
        _ = WorkerProcessSupport.waitForExit(of: pid)
    }
}
#endif
