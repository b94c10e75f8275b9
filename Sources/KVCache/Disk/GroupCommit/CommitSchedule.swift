/// When the store next needs its group commit started or its batch settled, and
/// whether the commit timer is armed for it.
///
/// Callers keep this current under the cache's lock, and while they keep calling
/// they start and settle commits themselves (see `DiskCache.scheduleGroupCommit`).
/// The timer reads it under its own small lock and takes the cache's lock only
/// once callers have gone quiet past the deadline: a steady writer is never kept
/// waiting by the commit thread.
final class CommitSchedule: Sendable {
    private struct State {
        var deadline: Double?
        var lastUpdate = -Double.infinity
        var isTimerArmed = false
    }

    enum TimerAction: Equatable {
        /// Nothing is due any more: the timer is disarmed.
        case idle
        /// Fire again at this time (not due yet, or a caller is about to do it).
        case rearm(Double)
        /// Due, and callers are quiet: run the follow-ups under the cache's lock. The
        /// timer is disarmed; those follow-ups arm it again if needed.
        case due
    }

    /// A caller that updated the schedule less than this long ago is taken to be
    /// still calling, and left to do the work due.
    let quietPeriod: Double
    private let state = MutexBox(State())

    init(quietPeriod: Double) {
        self.quietPeriod = quietPeriod
    }

    /// Records the next deadline at `now` (nil: nothing to do). Returns the time to
    /// arm the timer for, if it is not armed yet.
    func update(deadline: Double?, now: Double) -> Double? {
        state.withLock { state in
            state.deadline = deadline
            state.lastUpdate = now
            guard let deadline, !state.isTimerArmed else { return nil }
            state.isTimerArmed = true
            return deadline
        }
    }

    /// What the timer should do when it fires at `now`.
    func timerFired(at now: Double) -> TimerAction {
        state.withLock { state in
            guard let deadline = state.deadline else {
                state.isTimerArmed = false
                return .idle
            }
            let quietFrom = state.lastUpdate + quietPeriod
            if deadline > now || quietFrom > now { return .rearm(max(deadline, quietFrom)) }
            state.isTimerArmed = false
            return .due
        }
    }
}
