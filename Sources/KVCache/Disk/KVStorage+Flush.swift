/// `flush()` and the totals it commits for: what makes the writes so far durable.
extension KVStorage {
    /// Current totals: commits pending writes, then reads the stats row
    /// (which also picks up other processes' commits).
    func totals() throws -> Totals {
        try commit()
        return try refreshCommittedTotals()
    }

    /// Reads the stats row and keeps it as the committed totals; returns it.
    @discardableResult
    func refreshCommittedTotals() throws -> Totals {
        let totals = try readTotals()
        buffer.withLock { $0.committedTotals = totals }
        return totals
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
        settleBatchInFlight()
        if let error = flushError {
            flushError = nil
            droppedWritesError = nil
            throw error
        }
        do {
            try commit()
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
