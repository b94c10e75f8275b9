import CSQLite

/// Group commit.
///
/// Writes run inside one `BEGIN IMMEDIATE` transaction that stays open until the
/// owner commits it: after `groupCommitDelay`, when `groupCommitMaxWrites` writes
/// or `groupCommitMaxBytes` inline bytes accumulate, before trims and removeAll,
/// on `flush()` and on close. The crash-consistency rule holds across the batch:
/// a file value is complete on disk before its row is inserted, and a replaced
/// or removed file is deleted only after the commit that dropped its row.
extension KVStorage {
    /// Runs `body` inside the batch, opening it if needed. If SQLite rolled the
    /// whole transaction back on an error (it may after FULL, IOERR, NOMEM, BUSY),
    /// the batch is discarded consistently.
    func inBatch<Result>(_ body: () throws -> Result) throws -> Result {
        try beginBatchIfNeeded()
        do {
            return try body()
        } catch {
            if let database, batch != nil, !database.isInTransaction { rollbackBatch() }
            throw error
        }
    }

    func beginBatchIfNeeded() throws {
        guard batch == nil else { return }
        let database = try requireDatabase()
        try database.statement("BEGIN IMMEDIATE").run { try $0.execute() }
        batch = Batch()
        do {
            // We hold the write lock now: these totals include other processes' commits.
            committedTotals = try readTotals()
        } catch {
            rollbackBatch()
            throw error
        }
    }

    /// Totals including the uncommitted batch.
    var currentTotals: Totals { committedTotals + (batch?.delta ?? .zero) }

    /// Current totals, refreshed from the stats row when no batch is open.
    func totals() throws -> Totals {
        if batch == nil { committedTotals = try readTotals() }
        return currentTotals
    }

    func readTotals() throws -> Totals {
        try requireDatabase().statement(Manifest.selectStats).run { statement in
            guard try statement.step() else { return .zero }
            return Totals(count: Int(statement.int64(at: 0)), size: statement.int64(at: 1),
                          fileCount: Int(statement.int64(at: 2)), fileSize: statement.int64(at: 3))
        }
    }

    func commitIfFull() throws {
        guard let batch else { return }
        if batch.writes >= options.groupCommitMaxWrites || batch.bytes >= options.groupCommitMaxBytes {
            try commit()
        }
    }

    /// Writes buffered access times and the totals, commits, then deletes the
    /// files the batch made obsolete. On failure the batch is rolled back.
    func commit() throws {
        guard let current = batch else { return }
        let database = try requireDatabase()
        do {
            try applyAccessTimes()
            let delta = current.delta
            if delta != .zero {
                try database.statement(Manifest.addToStats).run { statement in
                    statement.bind(delta.count, at: 1)
                    statement.bind(delta.size, at: 2)
                    statement.bind(delta.fileCount, at: 3)
                    statement.bind(delta.fileSize, at: 4)
                    try statement.execute()
                }
            }
            try database.statement("COMMIT").run { try $0.execute() }
        } catch {
            counters.failedCommits += 1
            rollbackBatch()
            throw error
        }
        batch = nil
        committedTotals = committedTotals + current.delta
        counters.commits += 1
        for name in current.obsoleteFiles { files.remove(name) }
    }

    /// Abandons the batch: SQLite restores the old rows, so their files stay;
    /// the files written for the batch are deleted.
    func rollbackBatch() {
        guard let current = batch else { return }
        batch = nil
        if let database {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            if let totals = try? readTotals() { committedTotals = totals }
        }
        for name in current.newFiles { files.remove(name) }
    }

    /// Writes buffered access times inside the open batch.
    func applyAccessTimes() throws {
        guard !accessTimes.isEmpty else { return }
        let database = try requireDatabase()
        let statement = try database.statement(Manifest.updateAccessTime)
        let extends: Int64 = options.extendsExpirationOnAccess ? 1 : 0
        for (key, time) in accessTimes.drain() {
            try statement.run { statement in
                statement.bind(time, at: 1)
                statement.bind(extends, at: 2)
                statement.bind(key, at: 3)
                try statement.execute()
            }
        }
    }

    /// Writes buffered access times in their own transaction (or the open batch) and commits.
    func flushAccessTimes() throws {
        guard !accessTimes.isEmpty || batch != nil else { return }
        try beginBatchIfNeeded()
        try commit()
    }

    /// Commits everything and makes it durable: the WAL is checkpointed and
    /// fsynced, and with `syncsFiles` the data folder is fsynced too.
    func flush() throws {
        if let error = deferredError {
            deferredError = nil
            throw error
        }
        try flushAccessTimes()
        let database = try requireDatabase()
        try database.execute("PRAGMA wal_checkpoint(PASSIVE)")
        // A passive checkpoint may stop at a reader of another process; syncing
        // the WAL itself makes every commit so far survive a power loss.
        FileStore.sync(path: manifestPath + "-wal")
        if options.syncsFiles { FileStore.sync(path: dataPath) }
    }
}
