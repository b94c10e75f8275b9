import Dispatch

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
