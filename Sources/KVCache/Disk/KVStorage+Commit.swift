import CSQLite

/// Group commit.
///
/// `setValue` and `removeValue` only record pending writes (see PendingWrites).
/// `write(_:)` applies all of them, the buffered access times and the caller's
/// own statements in one `BEGIN IMMEDIATE` transaction. The owner commits after
/// `groupCommitDelay`, when the buffer is full, before trims, on `flush()` and
/// on close. Crash consistency holds throughout: a file value is complete on disk
/// before its row is inserted, and a replaced or removed file is deleted only
/// after the commit that dropped its row.
extension KVStorage {
    /// Runs `body` in a write transaction that also applies the pending writes
    /// and access times, then commits and deletes the files it made obsolete.
    /// If it fails, SQLite rolls everything back; the pending writes are kept
    /// for a retry when the failure is transient (busy, locked, or corruption
    /// that a rebuild fixes) and dropped otherwise (their files deleted).
    ///
    /// On a full disk a commit that gives space back — one with pending removals, or
    /// with `freesSpace` (trims, removeAll) — is retried once after `giveSpaceBack()`,
    /// with the pending sets dropped (and reported) and the removals kept.
    func write<Result>(freesSpace: Bool = false, _ body: (inout Transaction) throws -> Result) throws -> Result {
        // One writer at a time in this process: the batch in flight commits first.
        try settleOrWaitOffLock()
        do {
            let result = try writeOnce(keepsRemovalsOnDiskFull: true, body)
            if freesSpace { truncateWALIfDiskIsNearlyFull() }
            return result
        } catch let error as SQLiteError where error.isDiskFull && (freesSpace || !pending.isEmpty) {
            // `pending` holds only removals now.
            guard giveSpaceBack() else {
                if !pending.isEmpty { recordDroppedWrites(error) }
                dropPendingWrites()
                throw error
            }
            return try writeOnce(keepsRemovalsOnDiskFull: false, body)
        }
    }

    /// Records that acknowledged writes were lost, for the next write and the next flush to throw.
    func recordDroppedWrites(_ error: Error) {
        droppedWritesError = error
        flushError = error
    }

    private func writeOnce<Result>(keepsRemovalsOnDiskFull: Bool,
                                   _ body: (inout Transaction) throws -> Result) throws -> Result {
        let database = try requireDatabase()
        try requireWritable()
        let statements = try requireStatements()
        precondition(!database.isInTransaction, "write transactions do not nest")
        let batch = ManifestBatch(database: database, statements: statements)
        writeWillBegin?()
        try begin(statements.begin, on: database)
        // The pending writes become the batch this transaction applies. Readers find
        // them there, without the store's lock, until the commit has returned.
        let (writes, times) = buffer.withLock { state in
            let writes = state.pending
            state.committing = writes
            state.pending = PendingWrites()
            return (writes, state.accessTimes.drain())
        }
        var changes = ManifestBatch.Changes()
        let result: Result
        var transaction = Transaction()
        do {
            // We hold the write lock: these totals include other processes' commits.
            committedTotals = try batch.readTotals()
            transaction.start = committedTotals
            if !writes.isEmpty { try batch.apply(writes, into: &changes) }
            if !times.isEmpty {
                try batch.apply(accessTimes: times, extends: options.extendsExpirationOnAccess)
            }
            transaction.delta = changes.delta
            transaction.obsoleteFiles = changes.obsoleteFiles
            result = try body(&transaction)
            try batch.addToStats(transaction.delta)
            try statements.commit.run { try $0.execute() }
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            // Back in the same lock hold that ends `committing`: never in neither place.
            let superseded = buffer.withLock { state in
                state.committing = nil
                return Self.requeue(writes, into: &state)
            }
            for name in superseded { files.remove(name) }
            if let totals = try? readTotals() { committedTotals = totals }
            counters.failedCommits += 1
            if keepsRemovalsOnDiskFull, let error = error as? SQLiteError, error.isDiskFull, pending.hasRemovals {
                // The caller retries after giving space back: the removals stay for it.
                let (files, dropped) = pending.keepRemovalsOnly()
                for name in files { self.files.remove(name) }
                if dropped > 0 { recordDroppedWrites(error) }
            } else if !Self.isTransient(error) {
                // Writes already acknowledged to the caller are lost: say so on the
                // next write and the next flush, whichever path ran this commit.
                if !pending.isEmpty { recordDroppedWrites(error) }
                dropPendingWrites()
            }
            throw error
        }
        let committed = transaction
        buffer.withLock { state in
            state.committedTotals = state.committedTotals + committed.delta
            state.committing = nil
            state.counters.commits += 1
            state.counters.evictions[.replaced, default: 0] += changes.replaced
            state.counters.evictions[.expired, default: 0] += changes.expired
        }
        for name in committed.obsoleteFiles { files.remove(name) }
        return result
    }

    /// Runs `BEGIN IMMEDIATE`. When the caller can wait without the store's lock, a
    /// write lock held elsewhere is not waited for here (under the lock every writer
    /// takes) but on the commit thread (see `waitForWriteLockOffLock`).
    private func begin(_ begin: Statement, on database: Database) throws {
        guard canWaitOffLock else { return try begin.run { try $0.execute() } }
        do {
            try database.withoutBusyWait { try begin.run { try $0.execute() } }
        } catch let error as SQLiteError where error.code == SQLITE_BUSY {
            try waitForWriteLockOffLock()
        }
    }

    /// Puts the writes of a failed commit back for the next one, beneath the writes
    /// made since; returns the files of those it drops as superseded (never committed).
    static func requeue(_ writes: PendingWrites, into state: inout WriteBuffer.State) -> [String] {
        var superseded: [String] = []
        for (key, write) in writes.entries {
            if state.pending[key] == nil {
                _ = state.pending.record(write, forKey: key.string)
            } else if let name = write.value?.filename {
                superseded.append(name)
            }
        }
        return superseded
    }

    static func isTransient(_ error: Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        return error.code == SQLITE_BUSY || error.code == SQLITE_LOCKED || error.isCorruption
    }

    /// Commits pending writes and access times, if any.
    func commit() throws {
        try settleOrWaitOffLock()
        guard !pending.isEmpty || !accessTimes.isEmpty else { return }
        try write { _ in }
    }

    /// Throws (once) the error of a commit that dropped acknowledged writes.
    func throwDroppedWritesError() throws {
        if let error = droppedWritesError {
            droppedWritesError = nil
            throw error
        }
    }

    /// Commits when the buffer is full: detached (off the caller's lock) when the
    /// owner runs detached commits, after waiting for the batch in flight, so at
    /// most two buffers' worth of writes are ever uncommitted.
    func commitIfFull() throws {
        guard pending.count >= options.groupCommitMaxWrites || pending.bytes >= options.groupCommitMaxBytes else {
            return
        }
        try settleOrWaitOffLock()
        try throwDroppedWritesError()
        try commitInBackground()
    }

    /// True when enough writes are pending to start a detached commit before the
    /// delay is up: a quarter of the full buffer. A burst then commits on the
    /// commit thread while the caller goes on, instead of all at once later.
    var isWorthCommittingEarly: Bool {
        pending.count >= max(1, options.groupCommitMaxWrites / 4) || pending.bytes >= options.groupCommitMaxBytes / 4
    }

    /// Forgets the pending writes and deletes the files written for them.
    func dropPendingWrites() {
        for name in pending.files { files.remove(name) }
        pending.removeAll()
    }


    /// Current totals: commits pending writes, then reads the stats row
    /// (which also picks up other processes' commits).
    func totals() throws -> Totals {
        try commit()
        committedTotals = try readTotals()
        return committedTotals
    }

    func readTotals() throws -> Totals {
        try ManifestBatch(database: requireDatabase(), statements: requireStatements()).readTotals()
    }

    /// What `flush(.synced)` does after its commit, without the store's lock.
    struct SyncWork {
        let checkpointer: WALCheckpointer?
        let walPath: String
        /// The data folder, when file values are synced too.
        let dataPath: String?

        /// A PASSIVE checkpoint on the checkpoint connection; false if it must run on the
        /// store's connection instead (`checkpointOnStoreConnection`). Durability comes from
        /// syncing the WAL, which holds every commit so far; the checkpoint only keeps the
        /// WAL short. It may stop at another process's reader, or fail on a full disk (the
        /// database file has to grow): neither loses a write, so neither fails the flush.
        func checkpoint() -> Bool {
            checkpointer?.checkpointNow() ?? false
        }

        /// Fsyncs the WAL, then the data folder.
        func sync() {
            FileStore.sync(path: walPath)
            if let dataPath { FileStore.sync(path: dataPath) }
        }
    }

    /// Commits everything and returns what makes it durable (`.synced`), to run
    /// without the lock; nil when nothing is left to do. Throws the error of a commit
    /// that dropped acknowledged writes since the last flush.
    func flush(durability: DiskCache.Durability = .synced) throws -> SyncWork? {
        // A batch in flight first: a loss it reports is this flush's to throw.
        try settleOrWaitOffLock()
        if let error = flushError {
            flushError = nil
            droppedWritesError = nil
            throw error
        }
        do {
            try commit()
        } catch let wait as WaitOffLock {
            throw wait
        } catch {
            // Reported here; the next write and flush need not report it again.
            flushError = nil
            droppedWritesError = nil
            throw error
        }
        if let error = flushError {
            // The commit went through only after dropping the sets (a full disk).
            flushError = nil
            droppedWritesError = nil
            throw error
        }
        _ = try requireDatabase()
        guard !options.readOnly else { return nil }
        ensureReserve()
        guard durability == .synced else { return nil }
        return SyncWork(checkpointer: checkpointer, walPath: manifestPath + "-wal",
                        dataPath: options.syncsFiles ? dataPath : nil)
    }

    /// `SyncWork.checkpoint` on the store's connection (the checkpoint connection is missing).
    func checkpointOnStoreConnection() throws {
        let database = try requireDatabase()
        readers.endUnusedSnapshots()
        try? database.execute("PRAGMA wal_checkpoint(PASSIVE)")
    }
}
