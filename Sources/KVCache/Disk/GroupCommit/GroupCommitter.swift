import CSQLite
import Dispatch

// The manifest's one writer, in the order a batch meets its parts: the group
// commit (`GroupCommitter`: its thread, connection and failure policy; `CommitSchedule`:
// when a batch starts), the batch in flight (`DetachedCommit`, the ticket callers wait
// on), the connection it is applied on (`CommitConnection`), and the SQL a batch runs
// (`ManifestBatch`, which the store's own connection runs too).

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
/// they start and settle commits themselves (see `KVStorage.scheduleGroupCommit`).
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

/// A group commit running on the commit connection, outside the cache's lock.
///
/// The store hands its pending writes and access times over under the lock
/// (`KVStorage.detachCommit`); the SQLite work — inserting rows, updating the
/// indexes, writing the WAL — then runs on another thread while callers keep
/// reading and writing; whoever next needs the store's connection, or the
/// commit's result, settles it under the lock (`KVStorage.settleDetachedCommit`).
/// Until then reads find the batch's writes in the batch itself.
///
/// A batch may also carry `work`: statements of a write of many rows (a trim step,
/// removeAll, a step of `removeAll(progress:)`), run in the same transaction after the writes,
/// so that it too commits without the cache's lock (`DiskCache.performWork`).
final class DetachedCommit: Sendable {
    /// Statements run inside the batch's transaction, after its writes; returns a count
    /// (rows removed) for the caller.
    typealias Work = @Sendable (inout KVStorage.Transaction) throws -> Int

    let writes: PendingWrites
    /// Keyed byte-wise, like the buffer they came from.
    let accessTimes: [ByteWiseKey: Double]
    let work: Work?
    /// True for removeAll's batch: once it has committed, the data folder is swapped
    /// for an empty one when the batch is settled (`KVStorage.swapDataFolder`).
    let emptiesDataFolder: Bool
    /// What the failure policy did with the writes of a failed batch, once settled.
    let disposition = MutexBox<GroupCommitter.Disposition?>(nil)
    private let applied = DispatchGroup()
    private let result = MutexBox<Result<Outcome, Error>?>(nil)

    struct Outcome: Sendable {
        /// The writes' and the work's changes together.
        var changes: ManifestBatch.Changes
        /// The stats row as this commit left it (other processes' commits included).
        var totals: KVStorage.Totals
        /// What `work` returned (0 without work).
        var workResult = 0
    }

    init(writes: PendingWrites, accessTimes: [ByteWiseKey: Double], work: Work? = nil,
         emptiesDataFolder: Bool = false) {
        self.writes = writes
        self.accessTimes = accessTimes
        self.work = work
        self.emptiesDataFolder = emptiesDataFolder
        applied.enter()
    }

    /// Runs the commit on `connection`; called once, never under the cache's lock.
    func apply(on connection: CommitConnection, extendsExpirationOnAccess: Bool) {
        let outcome = Result {
            try connection.commit(writes, accessTimes: accessTimes.map { ($0.key.string, $0.value) },
                                  extendsExpirationOnAccess: extendsExpirationOnAccess, work: work)
        }
        result.withLock { $0 = outcome }
        applied.leave()
    }

    /// True once `apply` has finished (never blocks).
    var isApplied: Bool { result.withLock { $0 != nil } }

    /// Blocks until `apply` has finished, and returns its result.
    func waitUntilApplied() -> Result<Outcome, Error> {
        applied.wait()
        return result.withLock { $0! }
    }
}

/// The store's second SQLite connection, for detached group commits. Used by one
/// commit at a time (the store has at most one in flight), never under the cache's
/// lock; the store closes it only after settling that commit.
final class CommitConnection: @unchecked Sendable {
    private let database: Database
    private let statements: ManifestStatements
    private let recordsEvictions: Bool
    private let checkpointer: WALCheckpointer?

    init(path: String, options: KVStorage.Options, checkpointer: WALCheckpointer?) throws {
        // The manifest exists (the store's connection created it); WAL mode is in the file.
        database = try Database(path: path, busyTimeout: options.busyTimeout, create: false)
        recordsEvictions = options.onEviction != nil
        self.checkpointer = checkpointer
        do {
            try database.execute(Manifest.connectionPragmas(journalSizeLimit: options.journalSizeLimit))
            statements = try ManifestStatements(database)
        } catch {
            database.close()
            throw error
        }
        checkpointer?.install(on: database)
    }

    /// Applies the batch in one transaction, runs its work (if any) in the same
    /// transaction, and commits.
    func commit(_ writes: PendingWrites, accessTimes: [(key: String, time: Double)],
                extendsExpirationOnAccess: Bool, work: DetachedCommit.Work?) throws -> DetachedCommit.Outcome {
        if writes.hasSets { try checkpointer?.admitGrowth(of: writes, on: database) }
        let batch = ManifestBatch(database: database, statements: statements, recordsEvictions: recordsEvictions)
        try statements.begin.run { try $0.execute() }
        let (workResult, transaction) = try batch.commit(
            writes, accessTimes: accessTimes, extendsExpirationOnAccess: extendsExpirationOnAccess
        ) { transaction in try work?(&transaction) ?? 0 }
        return DetachedCommit.Outcome(changes: transaction.changes, totals: transaction.current, workResult: workResult)
    }

    func close() {
        database.close()
    }
}

/// Applies a batch of pending writes and access times to one connection, inside
/// its open write transaction, and records what the commit changes. Shared by the
/// store's own connection (`KVStorage.write`) and the commit connection
/// (`DetachedCommit`), so both write rows, and commit, the same way (`commit`).
struct ManifestBatch {
    let database: Database
    let statements: ManifestStatements
    /// Whether `Changes.evictions` lists the keys removed (only with an `onEviction`).
    var recordsEvictions = false

    /// What a transaction changed (`KVStorage.Transaction.changes`), for the owner to
    /// account for after the commit.
    struct Changes: Sendable {
        /// Change to the totals, added to the stats row before the commit.
        var delta = KVStorage.Totals.zero
        /// Files of replaced or removed rows: deleted only after the commit.
        var obsoleteFiles: [String] = []
        /// Rows a set replaced, and expired rows a conditional removal deleted.
        var replaced = 0
        var expired = 0
        /// The entries removed, if the transaction records them.
        var evictions: [Eviction] = []
    }

    /// Inside a write transaction begun on `database`: applies `writes`, then the
    /// access times, runs `body` (a trim step, a repair), adds the change to the stats
    /// row and commits. On failure it rolls back and throws. The returned transaction
    /// holds the whole change: the writes' and the body's.
    func commit<Result>(_ writes: PendingWrites, accessTimes: [(key: String, time: Double)],
                        extendsExpirationOnAccess: Bool,
                        _ body: (inout KVStorage.Transaction) throws -> Result)
        throws -> (result: Result, transaction: KVStorage.Transaction) {
        do {
            // We hold the write lock: these totals include other processes' commits.
            var transaction = KVStorage.Transaction(database: database, statements: statements,
                                                    recordsEvictions: recordsEvictions, start: try readTotals())
            if !writes.isEmpty { try apply(writes, into: &transaction) }
            if !accessTimes.isEmpty { try apply(accessTimes: accessTimes, extends: extendsExpirationOnAccess) }
            let result = try body(&transaction)
            try addToStats(transaction.changes.delta)
            try statements.commit.run { try $0.execute() }
            return (result, transaction)
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            throw error
        }
    }

    /// Applies `writes` in `transaction` (begun on this batch's connection), recording
    /// what they change in it.
    func apply(_ writes: PendingWrites, into transaction: inout KVStorage.Transaction) throws {
        // New rows' totals, added once (the loop only adds; a failure discards it all).
        var inserted = KVStorage.Totals.zero
        defer { transaction.changes.delta = transaction.changes.delta + inserted }
        for (byteWiseKey, write) in writes.entries {
            let key = byteWiseKey.string
            if case .set(let value) = write {
                // New keys (the common case) need no lookup of an old row.
                try bind(statements.insertNew, key: key, value: value)
                if database.changes > 0 {
                    inserted.add(size: value.size, isFile: value.filename != nil)
                    continue
                }
            }
            let old = try metadata(forKey: key)
            switch write {
            case .set(let value):
                try bind(statements.upsert, key: key, value: value)
                if let old {
                    transaction.recordRemoved(size: old.size, file: old.filename, key: key, reason: .replaced)
                    transaction.changes.replaced += 1
                }
                transaction.changes.delta.add(size: value.size, isFile: value.filename != nil)
            case .remove, .removeIfExpired, .removeIfFile:
                guard let old, write.removes(old), try deleteRow(key: key) else { continue }
                switch write {
                case .removeIfExpired:
                    transaction.recordRemoved(size: old.size, file: old.filename, key: key, reason: .expired)
                    transaction.changes.expired += 1
                case .remove:
                    transaction.recordRemoved(size: old.size, file: old.filename, key: key, reason: .removed)
                default:
                    // A broken row a read found: not an eviction.
                    transaction.recordRemoved(size: old.size, file: old.filename)
                }
            }
        }
    }

    /// Writes buffered access times (extending lifetimes if `extends`).
    func apply(accessTimes: [(key: String, time: Double)], extends: Bool) throws {
        let flag: Int64 = extends ? 1 : 0
        for (key, time) in accessTimes {
            try statements.updateAccessTime.run { statement in
                try statement.bind(time, at: 1)
                try statement.bind(flag, at: 2)
                try statement.bind(key, at: 3)
                try statement.execute()
            }
        }
    }

    /// Adds `delta` to the stats row.
    func addToStats(_ delta: KVStorage.Totals) throws {
        guard delta != .zero else { return }
        try statements.addToStats.run { statement in
            try statement.bind(delta.count, at: 1)
            try statement.bind(delta.size, at: 2)
            try statement.bind(delta.fileCount, at: 3)
            try statement.bind(delta.fileSize, at: 4)
            try statement.execute()
        }
    }

    func readTotals() throws -> KVStorage.Totals {
        try KVStorage.Totals.select(with: statements.selectStats)
    }

    /// The committed (or, inside the transaction, current) row's metadata.
    func metadata(forKey key: String) throws -> ManifestRow? {
        try ManifestRow.selectMetadata(key, with: statements.selectMetadata)
    }

    /// Deletes `key`'s row; false if there was none.
    private func deleteRow(key: String) throws -> Bool {
        try statements.deleteKey.run { statement in
            try statement.bind(key, at: 1)
            try statement.execute()
        }
        return database.changes > 0
    }

    /// Binds a pending value to an insert or upsert (same parameters) and runs it.
    /// The key and the bytes are bound in place: SQLite copies them into the row anyway.
    private func bind(_ statement: Statement, key: String, value: ManifestRow) throws {
        try statement.run { statement in
            try statement.bind(value.filename, at: 2)
            try statement.bind(value.size, at: 3)
            try statement.bind(value.accessed, at: 4)
            try statement.bind(value.deadline, at: 5)
            try statement.bind(value.lifetime, at: 6)
            try statement.withBorrowedText(key, at: 1) {
                try statement.withBorrowedBlob(value.extendedData, at: 7) {
                    try statement.withBorrowedBlob(value.inline, at: 8) {
                        try statement.execute()
                    }
                }
            }
        }
    }
}
