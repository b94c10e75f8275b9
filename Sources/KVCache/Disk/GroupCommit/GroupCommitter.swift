import CSQLite
import Dispatch

/// The group commit of one store: when its pending writes are committed, the thread
/// and connection that commit them, and what a failed commit does with its writes.
///
/// - **Schedule.** Sets and removes only record pending writes. The first call after
///   `delay` (or once a quarter of the buffer is pending) hands them over as a batch
///   (`KVStorage.detachCommit`), which `start` commits on the commit thread's
///   connection; the first call after it has applied settles it
///   (`KVStorage.settleDetachedCommit`). `timer` covers callers going quiet.
/// - **One writer at a time.** Trim steps, removeAll, the steps of
///   `removeAll(progress:)` and verify's repairs run their statements as the work of a
///   batch (`KVStorage.startWork`), after the batch in flight. The writes that still run
///   on the store's connection, under the lock (`KVStorage.write`: the last commit at
///   close, and every commit when the commit connection is missing) settle the batch
///   in flight first, and commit the pending writes with them.
/// - **One failure policy**, for a commit on either connection: `disposition(of:)`,
///   applied by `KVStorage.commitFailed`.
///
/// Guarded by the store's lock, except `timer` (read by the timer's thread). The batch
/// in flight itself lives in the write buffer (`WriteBuffer.State.detached`), where
/// readers find its writes.
final class GroupCommitter {
    /// How long a write may stay pending before its commit starts.
    let delay: Double
    /// The commit timer's view of the schedule (see `CommitSchedule`).
    let timer: CommitSchedule
    /// When the pending writes must be handed to a commit (on `Condition.now()`'s
    /// clock); nil while there are none.
    var deadline: Double?
    /// True once `timer` has been told there is nothing to do.
    var isTimerIdle = true
    private let extendsExpirationOnAccess: Bool
    /// Told each commit's duration (package trait `Metrics`).
    var recordCommit: (@Sendable (UInt64) -> Void)?
    /// Nil before the store opens, after close, or if it could not be opened: then
    /// every commit runs on the store's connection, under the caller's lock.
    private(set) var connection: CommitConnection?
    /// Runs batches; its jobs never take the store's lock, so a caller holding it may
    /// wait for them.
    private let thread = BackgroundThread()

    init(delay: Double, extendsExpirationOnAccess: Bool) {
        self.delay = delay
        self.extendsExpirationOnAccess = extendsExpirationOnAccess
        // A quarter of the delay: the timer acts at most that late after callers stop.
        timer = CommitSchedule(quietPeriod: delay / 4)
    }

    /// True when batches can run off the store's lock.
    var runsDetached: Bool { connection != nil }

    /// Opens the commit connection beside the store's (see `KVStorage.openManifest`).
    func open(path: String, options: KVStorage.Options, checkpointer: WALCheckpointer?) {
        connection = options.diagnostics.attempt("opening the commit connection (commits run under the lock)",
                                                 path: path) {
            try CommitConnection(path: path, options: options, checkpointer: checkpointer)
        }
    }

    /// Commits `batch` on the commit thread. Whoever settles it (also a closing store)
    /// waits for this job, so it holds strong references to the batch and connection only.
    /// `willBegin` runs on the commit thread first (a test hook).
    func start(_ batch: DetachedCommit, willBegin: (@Sendable () -> Void)? = nil) {
        guard let connection else { preconditionFailure("a detached batch needs the commit connection") }
        let extends = extendsExpirationOnAccess
        let recordCommit = recordCommit
        thread.async {
            willBegin?()
            guard let recordCommit else { return batch.apply(on: connection, extendsExpirationOnAccess: extends) }
            let started = DispatchTime.now().uptimeNanoseconds
            batch.apply(on: connection, extendsExpirationOnAccess: extends)
            recordCommit(DispatchTime.now().uptimeNanoseconds - started)
        }
    }

    /// Closes the commit connection; the caller has settled the batch in flight.
    func close() {
        connection?.close()
        connection = nil
    }

    // MARK: - Failure policy

    /// What happens to the writes of a commit that failed and was rolled back.
    enum Disposition: Equatable {
        /// Busy, locked, or corruption that a rebuild fixes: every write goes back,
        /// beneath newer ones, for the next commit.
        case retry
        /// A full disk, and the batch removes entries: space was given back
        /// (`KVStorage.giveSpaceBack`), the removals go back for the next commit
        /// (they free space), and the sets are dropped and reported.
        case keepRemovals
        /// Anything else: the writes are dropped (their files deleted) and reported
        /// on the next write and the next flush.
        case drop
    }

    /// The one failure policy of a group commit, on either connection. `giveSpaceBack`
    /// is called only for a full disk and a batch with removals.
    static func disposition(of error: Error, removesEntries: Bool, giveSpaceBack: () -> Bool) -> Disposition {
        if isTransient(error) { return .retry }
        if let error = error as? SQLiteError, error.isDiskFull, removesEntries, giveSpaceBack() { return .keepRemovals }
        return .drop
    }

    /// Busy, locked, or corruption that a rebuild fixes: trying again may succeed.
    static func isTransient(_ error: Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        return error.code == SQLITE_BUSY || error.code == SQLITE_LOCKED || error.isCorruption
    }
}

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
