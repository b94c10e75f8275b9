import Dispatch

/// A group commit running on the commit connection, outside the cache's lock.
///
/// The store hands its pending writes and access times over under the lock
/// (`KVStorage.detachCommit`); the SQLite work — inserting rows, updating the
/// indexes, writing the WAL — then runs on another thread while callers keep
/// reading and writing; whoever next needs the store's connection, or the
/// commit's result, settles it under the lock (`KVStorage.settleDetachedCommit`).
/// Until then reads find the batch's writes in the batch itself.
final class DetachedCommit: Sendable {
    let writes: PendingWrites
    /// Keyed byte-wise, like the buffer they came from.
    let accessTimes: [ByteWiseKey: Double]
    private let applied = DispatchGroup()
    private let result = MutexBox<Result<Outcome, Error>?>(nil)

    struct Outcome: Sendable {
        var changes: ManifestBatch.Changes
        /// The stats row as this commit left it (other processes' commits included).
        var totals: KVStorage.Totals
    }

    init(writes: PendingWrites, accessTimes: [ByteWiseKey: Double]) {
        self.writes = writes
        self.accessTimes = accessTimes
        applied.enter()
    }

    /// Runs the commit on `connection`; called once, never under the cache's lock.
    func apply(on connection: CommitConnection, extendsExpirationOnAccess: Bool) {
        let outcome = Result {
            try connection.commit(writes, accessTimes: accessTimes.map { ($0.key.string, $0.value) },
                                  extendsExpirationOnAccess: extendsExpirationOnAccess)
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

    init(path: String, options: KVStorage.Options, checkpointer: WALCheckpointer?) throws {
        // The manifest exists (the store's connection created it); WAL mode is in the file.
        database = try Database(path: path, busyTimeout: options.busyTimeout, create: false)
        do {
            try database.execute(Manifest.connectionPragmas(journalSizeLimit: options.journalSizeLimit))
            statements = try ManifestStatements(database)
        } catch {
            database.close()
            throw error
        }
        checkpointer?.install(on: database)
    }

    /// Applies the batch in one transaction and commits it.
    func commit(_ writes: PendingWrites, accessTimes: [(key: String, time: Double)],
                extendsExpirationOnAccess: Bool) throws -> DetachedCommit.Outcome {
        let batch = ManifestBatch(database: database, statements: statements)
        try statements.begin.run { try $0.execute() }
        do {
            let before = try batch.readTotals()
            var changes = ManifestBatch.Changes()
            try batch.apply(writes, into: &changes)
            try batch.apply(accessTimes: accessTimes, extends: extendsExpirationOnAccess)
            try batch.addToStats(changes.delta)
            try statements.commit.run { try $0.execute() }
            return DetachedCommit.Outcome(changes: changes, totals: before + changes.delta)
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            throw error
        }
    }

    func close() {
        database.close()
    }
}
