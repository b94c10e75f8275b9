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
