import Foundation
import KVCacheTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real child process running the test worker (Sources/KVCacheTestWorker),
/// its stdout read line by line through a pipe; optionally, its stdin written to
/// through a socket pair (`send`). Sendable so a test can wait for it on a thread of its
/// own; one thread at a time uses it.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    private let output: Int32
    /// Our end of the child's stdin, if it has one (-1 otherwise).
    private var input: Int32 = -1
    private var buffer: [UInt8] = []
    private var atEnd = false

    /// Starts the worker with `arguments`; with `takesInput`, its stdin is a socket that
    /// `send` writes to; with `stdin`, that descriptor is its standard input (the caller
    /// still owns and closes its own copy); else it inherits ours.
    init(worker arguments: [String], takesInput: Bool = false, stdin: Int32? = nil) throws {
        precondition(!(takesInput && stdin != nil), "a child takes input from one place")
        let executable = try WorkerProcessSupport.executablePath(named: "KVCacheTestWorker")
        var fds: [Int32] = [0, 0]
        var inputFDs: [Int32] = [-1, -1]
        // Close-on-exec, under a lock shared by all spawns: a child started by a
        // parallel test must not inherit our write end, or this pipe would never
        // reach end of file.
        ChildProcess.spawnLock.lock()
        defer { ChildProcess.spawnLock.unlock() }
        guard pipe(&fds) == 0 else { throw WorkerProcessSupport.Failure.spawn(errno) }
        // A socket, not a pipe: a send after the child died fails (MSG_NOSIGNAL) instead of
        // raising SIGPIPE in the test process.
        if takesInput, socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &inputFDs) != 0 {
            let code = errno
            close(fds[0])
            close(fds[1])
            throw WorkerProcessSupport.Failure.spawn(code)
        }
        for fd in fds + inputFDs where fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var redirections: [(descriptor: Int32, target: Int32)] = [(fds[1], 1)]
        if takesInput { redirections.append((inputFDs[0], 0)) }
        if let stdin { redirections.append((stdin, 0)) }
        do {
            pid = try WorkerProcessSupport.spawn(executable, arguments: arguments, redirections: redirections)
        } catch {
            for fd in fds + inputFDs where fd >= 0 { close(fd) }
            throw error
        }
        close(fds[1])
        output = fds[0]
        if takesInput {
            close(inputFDs[0])
            input = inputFDs[1]
        }
    }

    private static let spawnLock = NSLock()

    /// A pipe whose ends are close-on-exec (made under the spawn lock, so no child started
    /// meanwhile inherits them): children given its read end as `stdin` block on it until
    /// the caller closes the write end, all at the same moment.
    static func barrier() throws -> (read: Int32, write: Int32) {
        spawnLock.lock()
        defer { spawnLock.unlock() }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw WorkerProcessSupport.Failure.spawn(errno) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }

    deinit {
        close(output)
        if input >= 0 { close(input) }
    }

    /// Writes `line` and a newline to the child's stdin (see `takesInput`); false if it
    /// could not (the child has exited).
    @discardableResult
    func send(_ line: String) -> Bool {
        precondition(input >= 0, "the child was started without takesInput")
        return WorkerProcessSupport.sendLine(line, to: input) == nil
    }

    /// The next line of output, or nil at end of file (the child exited or was killed).
    func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if atEnd { return nil }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 {
                atEnd = true
                if !buffer.isEmpty {
                    // A last line without newline (never happens: lines are written whole).
                    defer { buffer.removeAll() }
                    return String(decoding: buffer, as: UTF8.self)
                }
                return nil
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Reads lines until one satisfies `condition` (returned), or end of file (nil).
    func readLine(until condition: (String) -> Bool, seen: (String) -> Void = { _ in }) -> String? {
        while let line = readLine() {
            seen(line)
            if condition(line) { return line }
        }
        return nil
    }

    func kill(_ signal: Int32 = SIGKILL) {
        _ = Glibc.kill(pid, signal)
    }

    /// Waits for the child to end: its exit code, or 128 + signal.
    func wait() -> Int32 {
        WorkerProcessSupport.waitForExit(of: pid)
    }
}
