import CSQLite

/// Group commits off the cache's lock (see DetachedCommit): at most one batch is
/// in flight; reads look in the pending writes, then in that batch, then in the
/// manifest; every use of the store's own connection for writing settles the
/// batch first, so the two connections never write at the same time.
extension KVStorage {
    /// Files of writes not committed yet (or still being written), which the orphan sweep must keep.
    var uncommittedFiles: Set<String> {
        var names = Set(pending.files).union(reservedFiles)
        if let committing { names.formUnion(committing.files) }
        if let detached { names.formUnion(detached.writes.files) }
        return names
    }

    /// Hands the pending writes and access times over as a batch for the commit
    /// connection. Nil if there is nothing to commit (and not `evenIfEmpty`), a
    /// batch is already in flight, or the store has no commit connection. An empty
    /// batch only waits for SQLite's write lock and commits nothing.
    func detachCommit(evenIfEmpty: Bool = false) throws -> (DetachedCommit, CommitConnection)? {
        guard detached == nil, evenIfEmpty || !pending.isEmpty || !accessTimes.isEmpty, let committer else { return nil }
        _ = try requireDatabase()
        let maxWrites = options.groupCommitMaxWrites
        let batch = buffer.withLock { state in
            let batch = DetachedCommit(writes: state.pending, accessTimes: state.accessTimes.times)
            // The next batch is usually about as large: room for twice this one's writes
            // (up to a full buffer) saves regrowing the table, which rehashes every key.
            state.pending = PendingWrites(capacity: min(2 * state.pending.count, maxWrites))
            state.accessTimes.removeAll()
            state.detached = batch
            return batch
        }
        return (batch, committer)
    }

    /// Starts committing the pending writes off the lock (the owner's timed and
    /// full-buffer commits). Commits on the store's connection instead when the
    /// owner runs no detached commits or the commit connection cannot be opened.
    /// A batch that has finished applying is settled first; while one is still in
    /// flight this does nothing (it settles first, then the owner schedules again).
    func commitInBackground() throws {
        if let batch = detached, batch.isApplied { settleDetachedCommit() }
        guard detached == nil else { return }
        guard let startDetachedCommit, committer != nil else { return try commit() }
        if let (batch, connection) = try detachCommit() { startDetachedCommit(batch, connection) }
    }

    /// What a caller under the store's lock waits for without it (`DiskCache` waits,
    /// then calls again): the batch in flight, which a write on the store's connection
    /// must follow, or a batch started to wait for another process's write lock.
    struct WaitOffLock: Error {
        let batch: DetachedCommit
        /// True when the batch was started because the write lock was busy.
        var forWriteLock = false
    }

    /// True when a call may throw `WaitOffLock` instead of waiting under the lock:
    /// its owner retries it, and a commit connection can do the waiting.
    var canWaitOffLock: Bool { waitsOffLock && startDetachedCommit != nil && committer != nil }

    /// Settles the batch in flight; while it is still being applied, throws
    /// `WaitOffLock` for it when the caller can wait without the lock, else waits.
    func settleOrWaitOffLock() throws {
        if let batch = detached, !batch.isApplied, canWaitOffLock { throw WaitOffLock(batch: batch) }
        settleDetachedCommit()
    }

    /// Called when `BEGIN IMMEDIATE` on the store's connection found the write lock
    /// held (another process's commit or trim): hands the pending writes to the commit
    /// connection, whose commit waits for the lock on the commit thread, and throws
    /// `WaitOffLock` for it. The caller waits without the store's lock, then calls again.
    func waitForWriteLockOffLock() throws -> Never {
        guard let (batch, connection) = try detachCommit(evenIfEmpty: true), let startDetachedCommit else {
            preconditionFailure("waitForWriteLockOffLock needs a commit connection and no batch in flight")
        }
        startDetachedCommit(batch, connection)
        throw WaitOffLock(batch: batch, forWriteLock: true)
    }

    /// Waits for the batch in flight, if any, and accounts for it: totals, counters
    /// and obsolete files after a commit; after a failure, the writes go back under
    /// newer ones for the next commit (busy, corruption) or are dropped and reported
    /// (disk full, I/O), as a failed commit on the store's connection would.
    func settleDetachedCommit() {
        guard let batch = detached else { return }
        let result = batch.waitUntilApplied()
        switch result {
        case .success(let outcome):
            // The commit has returned: its writes leave the buffer for the manifest.
            let wroteSomething = !batch.writes.isEmpty || !batch.accessTimes.isEmpty
            buffer.withLock { state in
                state.detached = nil
                state.committedTotals = outcome.totals
                if wroteSomething { state.counters.commits += 1 }
                state.counters.evictions[.replaced, default: 0] += outcome.changes.replaced
                state.counters.evictions[.expired, default: 0] += outcome.changes.expired
            }
            for name in outcome.changes.obsoleteFiles { files.remove(name) }
        case .failure(let error):
            counters.failedCommits += 1
            var writes = batch.writes
            if let full = error as? SQLiteError, full.isDiskFull, writes.hasRemovals, giveSpaceBack() {
                // Removals give space back: they go back for the next commit, now that
                // there is room for it; the sets are dropped and reported.
                let (dropped, droppedSets) = writes.keepRemovalsOnly()
                for name in dropped { files.remove(name) }
                if droppedSets > 0 { recordDroppedWrites(error) }
            } else if !Self.isTransient(error) {
                detached = nil
                for name in writes.files { files.remove(name) }
                recordDroppedWrites(error)
                return
            }
            // In the lock hold that ends the batch: its writes are never in neither place.
            let superseded = buffer.withLock { state in
                state.detached = nil
                for (key, time) in batch.accessTimes where state.accessTimes.time(for: key.string) == nil {
                    state.accessTimes.record(key.string, at: time)
                }
                return Self.requeue(writes, into: &state)
            }
            for name in superseded { files.remove(name) }
            if let error = error as? SQLiteError, error.isCorruption {
                try? rebuildAfterCorruption()
            }
        }
    }

    /// Closes the commit connection (after settling its batch).
    func closeCommitter() {
        settleDetachedCommit()
        committer?.close()
        committer = nil
    }
}
