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
