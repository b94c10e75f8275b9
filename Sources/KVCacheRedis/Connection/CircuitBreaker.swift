import Foundation
import KVCache

/// Fails calls fast for a while after the server could not be reached, so an unreachable
/// server costs one timeout, not one per call. After `breakDuration`, one call probes the
/// server (the others still fail fast); its success closes the breaker.
final class CircuitBreaker: Sendable {
    private struct State {
        var openUntil: Double?
        var probing = false
        var openings = 0
        var rejected = 0
    }

    private let state = MutexBox(State())
    private let breakDuration: Double

    init(breakDuration: Duration) {
        self.breakDuration = breakDuration.seconds
    }

    /// Throws `.circuitOpen` while the breaker is open, and lets one prober through after it.
    func permit(now: Double = Condition.now()) throws {
        try state.withLock { state in
            guard let until = state.openUntil else { return }
            if now >= until, !state.probing {
                state.probing = true
                return
            }
            state.rejected += 1
            throw RemoteLevelError(.circuitOpen, "the server failed; calls fail fast until \(max(0, until - now)) s from now")
        }
    }

    /// A call reached the server.
    func succeeded() {
        state.withLock { state in
            state.openUntil = nil
            state.probing = false
        }
    }

    /// A call could not reach the server: opens the breaker.
    func failed(now: Double = Condition.now()) {
        guard breakDuration > 0 else { return }
        state.withLock { state in
            if state.openUntil == nil || state.probing { state.openings += 1 }
            state.openUntil = now + breakDuration
            state.probing = false
        }
    }

    /// Whether calls fail fast now.
    var isOpen: Bool { state.withLock { $0.openUntil != nil } }
    /// How many times it opened, and how many calls it failed fast.
    var counts: (openings: Int, rejected: Int) { state.withLock { ($0.openings, $0.rejected) } }
}
