import Foundation
import KVCacheTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real child process running `KVCacheRedisTestWorker` (Sources/KVCacheRedisTestWorker):
/// a cache of its own in front of a Redis, driven by command lines, each answered by one line.
final class RedisWorkerProcess {
    let pid: pid_t
    /// Our end of a socket pair that is the child's stdin and stdout: a write to it after
    /// the child died fails with EPIPE (MSG_NOSIGNAL) instead of killing the test process.
    private let channel: Int32
    private var buffer: [UInt8] = []
    private var exited = false

    /// Starts the worker on `directory`, in front of the Redis at `url` with `namespace` (and
    /// the level's `settings`, `name=milliseconds`, after `defaults` to start from every
    /// RedisLevel default rather than 5 s timeouts: see the worker's usage), and waits for
    /// its `ready`.
    init(directory: URL, url: String, namespace: String, settings: [String] = []) throws {
        let executable = try WorkerProcessSupport.executablePath(named: "KVCacheRedisTestWorker")
        var fds: [Int32] = [0, 0]
        // Close-on-exec from the start: a child another test spawns meanwhile must not
        // inherit our end, or the worker would never see end of input.
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw WorkerProcessSupport.Failure.spawn(errno)
        }
        do {
            pid = try WorkerProcessSupport.spawn(executable, arguments: [directory.path, url, namespace] + settings,
                                                 redirections: [(fds[1], 0), (fds[1], 1)])
        } catch {
            close(fds[0])
            close(fds[1])
            throw error
        }
        close(fds[1])
        channel = fds[0]
        let first = try readLine()
        guard first == "ready" else { throw WorkerError.unexpected(command: "(start)", answer: first) }
    }

    deinit {
        if !exited {
            kill(pid, SIGKILL)
            _ = wait()
        }
        close(channel)
    }

    /// Sends `command` and returns the child's answer.
    @discardableResult
    func send(_ command: String) throws -> String {
        if let failure = WorkerProcessSupport.sendLine(command, to: channel) { throw WorkerError.io(failure) }
        return try readLine()
    }

    /// Sends `command` and throws unless the answer is `expected`.
    func expect(_ command: String, _ expected: String) throws {
        let answer = try send(command)
        if answer != expected { throw WorkerError.unexpected(command: command, answer: answer) }
    }

    /// Asks the worker to close its cache and exit, and waits for it: its exit status.
    func quit() throws -> Int32 {
        try expect("quit", "bye")
        exited = true
        return wait()
    }

    /// The next line, waiting at most 30 s (a worker that hangs fails the test, not the run).
    private func readLine() throws -> String {
        let deadline = Date(timeIntervalSinceNow: 30)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw WorkerError.noAnswer }
            var poller = pollfd(fd: channel, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(remaining * 1000) + 1)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(channel, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { throw WorkerError.exited }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Waits for the child to end: its exit code, or 128 + signal.
    private func wait() -> Int32 {
        WorkerProcessSupport.waitForExit(of: pid)
    }

    enum WorkerError: Error, CustomStringConvertible {
        case io(Int32)
        case unexpected(command: String, answer: String)
        case noAnswer
        case exited

        var description: String {
            switch self {
            case .io(let code): return "writing to the worker failed: \(String(cString: strerror(code)))"
            case .unexpected(let command, let answer): return "the worker answered \(command) with \(answer)"
            case .noAnswer: return "the worker did not answer within 30 s"
            case .exited: return "the worker exited"
            }
        }
    }
}
