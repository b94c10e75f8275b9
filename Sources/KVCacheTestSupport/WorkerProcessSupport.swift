import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Starting and reaping this package's test workers (`KVCacheTestWorker`,
/// `KVCacheRedisTestWorker`) as real child processes.
public enum WorkerProcessSupport {
    public enum Failure: Error, CustomStringConvertible {
        case spawn(Int32)
        case workerNotFound(name: String, tried: [String])

        public var description: String {
            switch self {
            case .spawn(let code): return "posix_spawn failed: \(String(cString: strerror(code)))"
            case .workerNotFound(let name, let tried):
                return "\(name) not found (tried \(tried.joined(separator: ", "))); `swift build` builds it"
            }
        }
    }

    /// The worker executable `name`: beside the test bundle (same build folder, whatever the
    /// scratch path or sanitizer), else in the package's default build folder.
    public static func executablePath(named name: String) throws -> String {
        var candidates: [String] = []
        if let executable = Bundle.main.executablePath {
            var folder = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
            // On Darwin the runner sits inside the .xctest bundle.
            while folder.path.contains(".xctest") { folder.deleteLastPathComponent() }
            candidates.append(folder.appendingPathComponent(name).path)
        }
        // This file is Sources/KVCacheTestSupport/WorkerProcessSupport.swift.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/\(name)").path)
        for candidate in candidates where access(candidate, X_OK) == 0 { return candidate }
        throw Failure.workerNotFound(name: name, tried: candidates)
    }

    /// Starts `executable` with `arguments`, each `(descriptor, target)` of `redirections`
    /// duplicated onto the child's `target` (0 stdin, 1 stdout); returns its pid.
    public static func spawn(_ executable: String, arguments: [String],
                             redirections: [(descriptor: Int32, target: Int32)]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (descriptor, target) in redirections { posix_spawn_file_actions_adddup2(&actions, descriptor, target) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let code = posix_spawn(&child, executable, &actions, nil, argv, environ)
        guard code == 0 else { throw Failure.spawn(code) }
        return child
    }

    /// Waits for `pid` to end: its exit code, or 128 + signal.
    public static func waitForExit(of pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Writes `line` and a newline to the socket `descriptor`, retrying partial writes and
    /// interruptions; returns the `errno` of a failed write (the peer has gone: no SIGPIPE
    /// is raised), or nil once all of it is written.
    public static func sendLine(_ line: String, to descriptor: Int32) -> Int32? {
        var bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes {
                send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }
}
