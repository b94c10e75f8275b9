import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real child process running the test worker (Sources/KVCacheTestWorker),
/// its stdout read line by line through a pipe.
final class ChildProcess {
    let pid: pid_t
    private let output: Int32
    private var buffer: [UInt8] = []
    private var atEnd = false

    /// Starts the worker with `arguments`.
    init(worker arguments: [String]) throws {
        let executable = try ChildProcess.workerPath()
        var fds: [Int32] = [0, 0]
        // Close-on-exec, under a lock shared by all spawns: a child started by a
        // parallel test must not inherit our write end, or this pipe would never
        // reach end of file.
        ChildProcess.spawnLock.lock()
        defer { ChildProcess.spawnLock.unlock() }
        guard pipe(&fds) == 0 else { throw ChildError.spawn(errno) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let code = posix_spawn(&child, executable, &actions, nil, argv, environ)
        close(fds[1])
        guard code == 0 else {
            close(fds[0])
            throw ChildError.spawn(code)
        }
        pid = child
        output = fds[0]
    }

    private static let spawnLock = NSLock()

    deinit {
        close(output)
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
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    enum ChildError: Error, CustomStringConvertible {
        case spawn(Int32)
        case workerNotFound([String])

        var description: String {
            switch self {
            case .spawn(let code): return "posix_spawn failed: \(String(cString: strerror(code)))"
            case .workerNotFound(let tried):
                return "KVCacheTestWorker not found (tried \(tried.joined(separator: ", "))); `swift build` builds it"
            }
        }
    }

    /// The worker executable: beside the test bundle (same build folder, whatever
    /// the scratch path or sanitizer), else in the package's default build folder.
    static func workerPath() throws -> String {
        var candidates: [String] = []
        if let executable = Bundle.main.executablePath {
            var folder = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
            // On Darwin the runner sits inside the .xctest bundle.
            while folder.path.contains(".xctest") { folder.deleteLastPathComponent() }
            candidates.append(folder.appendingPathComponent("KVCacheTestWorker").path)
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/KVCacheTestWorker").path)
        for candidate in candidates where access(candidate, X_OK) == 0 { return candidate }
        throw ChildError.workerNotFound(candidates)
    }
}
