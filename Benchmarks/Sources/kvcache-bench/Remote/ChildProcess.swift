import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with posix_spawn and reaped with waitpid (Foundation's
/// `Process.waitUntilExit` hung in the remote level's tests), optionally with pipes to
/// its stdin and from its stdout. Registered so an interrupted run kills it.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    /// The write end of the child's stdin, or -1.
    private(set) var input: Int32
    /// The child's stdout, line by line (nil without pipes).
    let output: FDLineReader?
    private var isReaped = false

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts `path` with `arguments` (argv[0] is `path`). With `pipes`, the child's stdin
    /// and stdout are pipes to this process; otherwise it inherits both.
    init(_ path: String, _ arguments: [String], pipes: Bool) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var toChild: [Int32] = [-1, -1], fromChild: [Int32] = [-1, -1]
        if pipes {
            guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
                throw Failure(description: "pipe: \(String(cString: strerror(errno)))")
            }
            // The child gets them as 0 and 1 (dup2 clears close-on-exec there); no other
            // child (the redis-server, say) inherits them.
            for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
            posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, path, &actions, nil, argv, environ)
        if pipes {
            close(toChild[0])
            close(fromChild[1])
        }
        guard status == 0 else {
            if pipes {
                close(toChild[1])
                close(fromChild[0])
            }
            throw Failure(description: "posix_spawn \(path): \(String(cString: strerror(status)))")
        }
        pid = child
        input = pipes ? toChild[1] : -1
        output = pipes ? FDLineReader(fd: fromChild[0]) : nil
        ChildProcesses.register(pid)
    }

    deinit {
        kill()
        if input >= 0 { close(input) }
    }

    /// Writes `line` and a newline to the child's stdin.
    func send(_ line: String) throws {
        var bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { write(input, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "write to child \(pid): \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// Closes the child's stdin: it sees end of file.
    func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    func signal(_ number: Int32) {
        if !isReaped { _ = Glibc.kill(pid, number) }
    }

    /// Waits for the child to end (at most `timeout` seconds; then kills it); its exit
    /// status, or nil when it did not exit by itself in time.
    @discardableResult
    func wait(timeout: Double) -> Int32? {
        guard !isReaped else { return nil }
        let deadline = Clock.now() + UInt64(timeout * 1e9)
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { break }
            if result < 0 && errno != EINTR { break }
            if Clock.now() > deadline {
                kill()
                return nil
            }
            usleep(2_000)
        }
        isReaped = true
        ChildProcesses.unregister(pid)
        // WIFEXITED / WEXITSTATUS by hand (the macros are not imported).
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : nil
    }

    /// SIGCONT (a stopped child cannot die otherwise), SIGKILL, and reaps it.
    func kill() {
        guard !isReaped else { return }
        _ = Glibc.kill(pid, SIGCONT)
        _ = Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        isReaped = true
        ChildProcesses.unregister(pid)
    }

    /// This executable's path (for starting itself as a peer).
    static func ownExecutable() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if length > 0 { return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return CommandLine.arguments[0]
    }

    /// The first executable `name` on PATH.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// The children alive now, killed when the run is interrupted (`InterruptCleanup`).
enum ChildProcesses {
    private static let lock = PthreadMutex()
    nonisolated(unsafe) private static var pids: Set<pid_t> = []

    static func register(_ pid: pid_t) { lock.withLock { _ = pids.insert(pid) } }
    static func unregister(_ pid: pid_t) { lock.withLock { _ = pids.remove(pid) } }

    /// SIGCONT and SIGKILL to every child still registered (no reaping: the process exits).
    static func killAll() {
        lock.withLock {
            for pid in pids {
                _ = kill(pid, SIGCONT)
                _ = kill(pid, SIGKILL)
            }
            pids.removeAll()
        }
    }
}

/// Lines from a file descriptor, with a timeout per line.
final class FDLineReader: @unchecked Sendable {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var isAtEnd = false

    init(fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    /// The next line without its newline; nil at end of file or after `timeout` seconds.
    func nextLine(timeout: Double) -> String? {
        let deadline = Clock.now() + UInt64(timeout * 1e9)
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if isAtEnd { return nil }
            let now = Clock.now()
            guard now < deadline else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, (deadline - now) / 1_000_000)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4_096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                isAtEnd = true
            } else {
                buffer.append(contentsOf: chunk[..<count])
            }
        }
    }
}
