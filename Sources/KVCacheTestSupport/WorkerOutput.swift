#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A test worker's lines to its parent on stdout, one `write(2)` each and no buffering, so
/// a line the child printed is in the pipe even if it is killed right after. Lines stay
/// under PIPE_BUF, so lines of several threads never interleave.
public enum WorkerOutput {
    /// Writes `text` and a newline; exits 70 if stdout fails.
    public static func line(_ text: String) {
        var bytes = Array((text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                exit(70)
            }
            offset += written
        }
    }
}

extension String {
    /// The text with each newline made a space: one line for `WorkerOutput.line`.
    public func replacingNewlines() -> String {
        String(map { $0 == "\n" ? " " : $0 })
    }
}
