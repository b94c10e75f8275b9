#if Vapor
import Foundation
import KVCacheTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A running `KVCacheVaporTestApp`: an app serving the KVCache driver on `directory`, in a
/// child process. Closing its input shuts it down.
final class TestAppProcess {
    enum Failure: Error, CustomStringConvertible {
        case pipe(Int32)
        case noPort(output: String)

        var description: String {
            switch self {
            case .pipe(let code): return "pipe failed: \(String(cString: strerror(code)))"
            case .noPort(let output): return "the test app printed no port: \(output)"
            }
        }
    }

    let pid: pid_t
    /// The write end of the child's standard input, and the read end of its standard output.
    private var input: Int32
    private let output: Int32
    private var buffered: [UInt8] = []
    private(set) var port = 0

    /// Starts the app on `directory` and waits (at most `bound`) for the port it serves on.
    init(directory: URL, within bound: Duration = .seconds(60)) throws {
        var stdinPipe: [Int32] = [0, 0]
        var stdoutPipe: [Int32] = [0, 0]
        guard pipe(&stdinPipe) == 0 else { throw Failure.pipe(errno) }
        guard pipe(&stdoutPipe) == 0 else { throw Failure.pipe(errno) }
        // Close-on-exec: the child gets its ends only as its stdin and stdout (else its own
        // copy of the input's write end would keep that input from ever closing).
        for descriptor in stdinPipe + stdoutPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        let executable = try WorkerProcessSupport.executablePath(named: "KVCacheVaporTestApp")
        defer {
            close(stdinPipe[0])
            close(stdoutPipe[1])
        }
        pid = try WorkerProcessSupport.spawn(executable, arguments: [directory.path],
                                             redirections: [(stdinPipe[0], 0), (stdoutPipe[1], 1)])
        input = stdinPipe[1]
        output = stdoutPipe[0]
        guard let line = readLine(within: bound), line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)) else {
            _ = stop()
            throw Failure.noPort(output: String(decoding: buffered, as: UTF8.self))
        }
        self.port = port
    }

    deinit {
        if input >= 0 { close(input) }
        close(output)
    }

    /// The next line of the child's output, or nil if none comes within `bound`.
    func readLine(within bound: Duration) -> String? {
        let clock = ContinuousClock()
        let deadline = clock.now + bound
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            let left = deadline - clock.now
            guard left > .zero else { return nil }
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(left.components.seconds * 1_000 + 1, 1_000))
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4_096)
            let count = read(output, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }  // the child closed its output
            buffered += chunk[..<count]
        }
    }

    /// Closes the child's input (it shuts its app down) and waits for it: its exit code.
    func stop() -> Int32 {
        if input >= 0 {
            close(input)
            input = -1
        }
        return WorkerProcessSupport.waitForExit(of: pid)
    }
}
#endif
