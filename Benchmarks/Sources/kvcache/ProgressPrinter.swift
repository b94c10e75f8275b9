import Foundation
import KVCache

/// Verification progress on stderr: a line rewritten in place on a terminal (at most
/// ten times a second), otherwise one line per phase so logs stay short.
final class ProgressPrinter {
    private let enabled: Bool
    private let isTerminal = Console.stderrIsTerminal
    private var phase: DiskCache.VerificationProgress.Phase?
    private var lastDraw = 0.0
    private var drewLine = false

    init(enabled: Bool) {
        self.enabled = enabled
    }

    func show(_ progress: DiskCache.VerificationProgress) {
        guard enabled else { return }
        if !isTerminal {
            if progress.phase != phase {
                Console.writeError("verify: \(progress.phase.title)" + (progress.total.map { " (\($0))" } ?? ""))
            }
            phase = progress.phase
            return
        }
        let text = "verify: \(progress.phase.title)"
            + (progress.total.map { " \(progress.completed)/\($0)" } ?? "")
        let now = Date().timeIntervalSince1970
        let finished = progress.total.map { progress.completed >= $0 } ?? false
        guard progress.phase != phase || finished || now - lastDraw >= 0.1 else { return }
        phase = progress.phase
        lastDraw = now
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
        drewLine = true
    }

    /// Ends the line being rewritten, if any.
    func finish() {
        if drewLine { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

extension DiskCache.VerificationProgress.Phase {
    var title: String {
        switch self {
        case .integrity: return "SQLite integrity check"
        case .files: return "value files"
        case .orphans: return "orphan files"
        case .summary: return "summary"
        }
    }
}
