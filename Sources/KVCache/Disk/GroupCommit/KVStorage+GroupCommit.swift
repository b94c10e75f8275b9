import CSQLite

/// Group commit (see `GroupCommitter` for who owns what).
///
/// `setValue` and `removeValue` only record pending writes (see PendingWrites). They
/// are committed as a batch on the commit connection (`detachCommit`, then
/// `settleDetachedCommit`), with a trim step's statements when it carries work
/// (`startWork`, `finishWork`); or by `write(_:)` on the store's connection together
/// with a caller's own statements, in one `BEGIN IMMEDIATE` transaction. Every write on
/// the store's connection settles the batch in flight first, so the two connections
/// never write at the same time. A failed commit on either goes through
/// `commitFailed`. Crash consistency holds throughout: a file value is complete on
/// disk before its row is inserted, and a replaced or removed file is deleted only
/// after the commit that dropped its row.
extension KVStorage {
    // MARK: - Schedule

    /// Called under the lock after every operation: settles a batch that has applied,
    /// hands the pending writes over once their deadline has passed (or a quarter of
    /// the buffer is pending), and returns when to arm the commit timer, if it is not
    /// armed yet. A steady writer thus starts and settles commits itself, and never
    /// waits for the commit thread; the timer covers callers going quiet.
    func scheduleGroupCommit() -> (armAt: Double, now: Double)? {
        let committer = groupCommitter
        // One hold of the buffer's lock decides, unless a batch settles or starts here.
        var view = buffer.withLock { ScheduleView($0) }
        // Reads of an idle store skip the clock and the timer's lock.
        if view.pendingCount == 0, view.inFlight == nil, committer.isTimerIdle { return nil }
        let now = Condition.now()
        if isClosed {
            committer.isTimerIdle = true
            _ = committer.timer.update(deadline: nil, now: now)
            return nil
        }
        if let batch = view.inFlight, batch.isApplied {
            settleDetachedCommit()
            view = buffer.withLock { ScheduleView($0) }
        }
        if view.pendingCount == 0 {
            committer.deadline = nil
        } else {
            let deadline = committer.deadline ?? now + committer.delay
            committer.deadline = deadline
            if deadline <= now || isWorthCommittingEarly(view), view.inFlight == nil {
                // Failures are recorded for the next write and flush to throw (see
                // `commitFailed`); a busy commit keeps the writes for a retry.
                try? commitInBackground()
                view = buffer.withLock { ScheduleView($0) }
                if view.pendingCount == 0 { committer.deadline = nil }
            }
        }
        // A batch in flight is settled by the next call, or by the timer one delay later
        // (and only then can the pending writes behind it go).
        let deadline = view.inFlight != nil ? now + committer.delay : committer.deadline
        committer.isTimerIdle = deadline == nil
        return committer.timer.update(deadline: deadline, now: now).map { ($0, now) }
    }

    /// What the schedule reads of the buffer, in one hold of its lock.
    private struct ScheduleView {
        let pendingCount: Int
        let pendingBytes: Int
        let inFlight: DetachedCommit?

        init(_ state: WriteBuffer.State) {
            pendingCount = state.pending.count
            pendingBytes = state.pending.bytes
            inFlight = state.detached
        }
    }

    /// True when enough writes are pending to start a detached commit before the
    /// delay is up: a quarter of the full buffer. A burst then commits on the
    /// commit thread while the caller goes on, instead of all at once later.
    private func isWorthCommittingEarly(_ view: ScheduleView) -> Bool {
        view.pendingCount >= max(1, options.groupCommitMaxWrites / 4) || view.pendingBytes >= batchByteLimit / 4
    }

    /// True when pending writes or buffered access times wait for a commit.
    func hasWritesToCommit() -> Bool {
        buffer.withLock { !$0.pending.isEmpty || !$0.accessTimes.isEmpty }
    }

    /// The batch in flight on the commit connection, if any.
    func batchInFlight() -> DetachedCommit? {
        buffer.withLock { $0.detached }
    }

    /// Commits the pending writes and access times now, under the lock: the batch in
    /// flight first, then the rest on the store's connection. A caller that can wait
    /// without the lock declared `.committed` (see `ticket(for:)`), so its writes are
    /// committed already; what readers recorded since is housekeeping, left to the
    /// group commit (committing it here could wait under the lock for another
    /// process's write lock).
    func commit() throws {
        settleBatchInFlight()
        guard hasWritesToCommit() else { return }
        if canWaitOffLock {
            let callerWrites = buffer.withLock { $0.pending.hasCallerWrites }
            assert(!callerWrites, "a call that commits declares .committed in ticket(for:)")
            if !callerWrites { return }
        }
        try write { _ in }
    }

    /// True when the buffer holds as many writes or bytes as one batch may.
    func isBufferFull() -> Bool {
        buffer.withLock { isFull($0) }
    }

    private func isFull(_ state: WriteBuffer.State) -> Bool {
        state.pending.count >= options.groupCommitMaxWrites || state.pending.bytes >= batchByteLimit
    }

    /// Commits when the buffer is full: detached (off the caller's lock) once the batch in
    /// flight has applied, so at most two buffers' worth of writes are ever uncommitted.
    /// A caller that can wait without the lock declared `.roomToStage`, so that batch has
    /// applied; unless reads queued removals since, and then the next call commits.
    func commitIfFull() throws {
        guard isBufferFull() else { return }
        if canWaitOffLock, let batch = batchInFlight(), !batch.isApplied { return }
        settleBatchInFlight()
        try throwDroppedWritesError()
        try commitInBackground()
    }

    /// Starts committing the pending writes off the lock (timed and full-buffer
    /// commits); on the store's connection instead when there is no commit connection.
    /// A batch that has finished applying is settled first; while one is still in
    /// flight this does nothing (it settles first, then the schedule starts the next).
    func commitInBackground() throws {
        if let batch = batchInFlight(), batch.isApplied { settleDetachedCommit() }
        guard batchInFlight() == nil else { return }
        guard groupCommitter.runsDetached else { return try commit() }
        if let batch = try detachCommit() { groupCommitter.start(batch) }
    }

    // MARK: - The batch on the commit connection

    /// Files of writes not committed yet (or still being written), which the orphan sweep
    /// must keep: one hold of the buffer's lock.
    func uncommittedFiles() -> Set<String> {
        buffer.withLock { $0.uncommittedFiles }.union(reservedFiles)
    }

    /// Hands the pending writes and access times over as the batch in flight, for
    /// `GroupCommitter.start`, with `work` to run in its transaction. Nil if there is
    /// nothing to commit (and not `evenIfEmpty`), a batch is already in flight, or there
    /// is no commit connection. An empty batch without work only waits for SQLite's
    /// write lock and commits nothing.
    func detachCommit(evenIfEmpty: Bool = false, work: DetachedCommit.Work? = nil,
                      emptiesDataFolder: Bool = false) throws -> DetachedCommit? {
        guard batchInFlight() == nil, evenIfEmpty || work != nil || hasWritesToCommit(),
              groupCommitter.runsDetached else { return nil }
        _ = try requireDatabase()
        let maxWrites = options.groupCommitMaxWrites
        return buffer.withLock {
            $0.takeBatch(work: work, emptiesDataFolder: emptiesDataFolder, maxWrites: maxWrites)
        }
    }

    /// Waits for the batch in flight, if any, and accounts for it: totals, counters
    /// and obsolete files after a commit; `commitFailed` after a failure.
    func settleDetachedCommit() {
        guard let batch = batchInFlight() else { return }
        switch batch.waitUntilApplied() {
        case .success(let outcome):
            // The commit has returned: its writes leave the buffer for the manifest.
            let wroteSomething = !batch.writes.isEmpty || !batch.accessTimes.isEmpty || batch.work != nil
            buffer.withLock {
                $0.settle(.detached, totals: outcome.totals, changes: outcome.changes, countsCommit: wroteSomething)
            }
            for name in outcome.changes.obsoleteFiles { files.remove(name) }
            evictionReporter?.report(outcome.changes.evictions)
            // Before any later batch can commit rows whose files are in the old folder.
            if batch.emptiesDataFolder { swapDataFolder() }
            // Removals on a nearly full disk: the WAL's room goes back to the disk too.
            if batch.writes.hasRemovals { truncateWALIfDiskIsNearlyFull() }
            updateBatchByteLimit()
        case .failure(let error):
            let disposition = commitFailed(error, writes: batch.writes, accessTimes: batch.accessTimes,
                                           batch: .detached)
            batch.disposition.withLock { $0 = disposition }
            if let error = error as? SQLiteError, error.isCorruption {
                _ = options.diagnostics.attempt("rebuilding the corrupt manifest", path: manifestPath) {
                    try rebuildAfterCorruption()
                }
            }
        }
    }

    // MARK: - Writes of many rows on the commit connection

    /// Starts `work` (a trim step, a step of removeAll) on the commit connection, in
    /// one transaction with the pending writes and access times (applied first, so the
    /// LRU order and extended expirations are right); nil when there is no commit
    /// connection, and the caller runs it with `write` instead. The caller waits for
    /// the batch without the store's lock, then calls `finishWork`.
    func startWork(_ work: @escaping DetachedCommit.Work, emptiesDataFolder: Bool = false) throws -> DetachedCommit? {
        guard groupCommitter.runsDetached else { return nil }
        // One writer at a time: the batch in flight first (declared `.idleWriter`).
        settleBatchInFlight()
        try requireWritable()
        let hooks = hooks
        let paused: DetachedCommit.Work = { transaction in
            let result = try work(&transaction)
            hooks.workWillCommit.run()
            return result
        }
        guard let batch = try detachCommit(work: paused, emptiesDataFolder: emptiesDataFolder) else { return nil }
        groupCommitter.start(batch, willBegin: { hooks.workWillBegin.run() })
        return batch
    }

    /// Settles `batch` (a `startWork` batch that has applied), if no other call has,
    /// and returns what its work returned. Nil when it failed in a way worth another
    /// try (unless `isLastTry`): busy or a rebuilt corrupt manifest (its writes went
    /// back), or a full disk once space was given back (as `write(freesSpace:)`
    /// retries). Else throws; a corrupt manifest, which settling rebuilt, as
    /// `RebuiltAfterCorruption` when not `retriesCorruption`.
    func finishWork(_ batch: DetachedCommit, freesSpace: Bool, retriesCorruption: Bool,
                    isLastTry: Bool) throws -> Int? {
        if batchInFlight() === batch { settleDetachedCommit() }
        switch batch.waitUntilApplied() {
        case .success(let outcome):
            if freesSpace { truncateWALIfDiskIsNearlyFull() }
            return outcome.workResult
        case .failure(let error):
            guard let error = error as? SQLiteError else { throw error }
            if error.isCorruption, !retriesCorruption { throw RebuiltAfterCorruption(message: error.message) }
            if isLastTry { throw error }
            if error.isDiskFull {
                let disposition = batch.disposition.withLock { $0 }
                if disposition == .keepRemovals || (freesSpace && giveSpaceBack()) { return nil }
                throw error
            }
            if GroupCommitter.isTransient(error) { return nil }
            throw error
        }
    }

    /// A batch's work met a corrupt manifest, which settling the batch has rebuilt.
    struct RebuiltAfterCorruption: Error {
        let message: String
    }

    // MARK: - Tickets: what a call waits for without the store's lock

    /// What a call under the store's lock needs from the commit connection before it
    /// runs (see `ticket(for:)`).
    enum WriterNeed: Equatable {
        /// Nothing: it stages no write and commits nothing.
        case nothing
        /// Room to stage a write: when the buffer is full, the batch in flight has applied.
        case roomToStage
        /// No batch still applying: the call starts one of its own (a batch with work).
        case idleWriter
        /// The writes staged so far are committed (a trim's totals, keys in order, flush,
        /// inspect, verify).
        case committed
    }

    /// The batch a call needing `need` must wait for, without the store's lock, before
    /// it runs; nil when it can run now. For `.committed`, the pending writes are handed
    /// to the commit connection first, and their batch is the ticket. The caller
    /// (`DiskCache.withStoreLock`) waits for the ticket, then asks again: a batch
    /// settles, and writes staged meanwhile go, under the lock. Nil too when the caller
    /// cannot wait without the lock (`canWaitOffLock`): the call then waits under it.
    func ticket(for need: WriterNeed) throws -> DetachedCommit? {
        guard need != .nothing, canWaitOffLock else { return nil }
        // One hold of the buffer's lock on a set's path.
        let (inFlight, full) = buffer.withLock { ($0.detached, need == .roomToStage && isFull($0)) }
        if let batch = inFlight, !batch.isApplied {
            return need != .roomToStage || full ? batch : nil
        }
        guard need == .committed else { return nil }
        settleDetachedCommit()
        guard hasWritesToCommit(), let batch = try detachCommit() else { return nil }
        groupCommitter.start(batch)
        return batch
    }

    /// True when a call may be handed a ticket instead of waiting under the lock: its
    /// owner asks for one, and the commit connection can do the waiting.
    var canWaitOffLock: Bool { waitsOffLock && groupCommitter.runsDetached }

    /// Settles the batch in flight, waiting under the lock while it applies. A caller
    /// that can wait without the lock has declared its need (`ticket(for:)`), and finds
    /// the batch applied.
    func settleBatchInFlight() {
        assert(!canWaitOffLock || batchInFlight()?.isApplied != false,
               "a call that waits for the batch in flight declares its need in ticket(for:)")
        settleDetachedCommit()
    }

    // MARK: - A write on the store's connection

    /// Runs `body` in a write transaction that also applies the pending writes and
    /// access times, then commits and deletes the files it made obsolete. If it fails,
    /// SQLite rolls everything back and `commitFailed` decides what becomes of the
    /// pending writes.
    ///
    /// On a full disk, a commit that gives space back (one with pending removals, or
    /// with `freesSpace`: trims, removeAll) is retried once after `giveSpaceBack()`.
    func write<Result>(freesSpace: Bool = false, _ body: (inout Transaction) throws -> Result) throws -> Result {
        // One writer at a time in this process: the batch in flight commits first.
        settleBatchInFlight()
        do {
            let removes = buffer.withLock { $0.pending.hasRemovals }
            let result = try writeOnce(body)
            if freesSpace || removes { truncateWALIfDiskIsNearlyFull() }
            return result
        } catch let failure as CommitFailure {
            guard let full = failure.error as? SQLiteError, full.isDiskFull,
                  failure.disposition == .keepRemovals || (freesSpace && giveSpaceBack()) else { throw failure.error }
            do {
                return try writeOnce(body)
            } catch let again as CommitFailure {
                throw again.error
            }
        }
    }

    /// A failed `writeOnce`, after `commitFailed`.
    private struct CommitFailure: Error {
        let error: Error
        let disposition: GroupCommitter.Disposition
    }

    private func writeOnce<Result>(_ body: (inout Transaction) throws -> Result) throws -> Result {
        let database = try requireDatabase()
        try requireWritable()
        let statements = try requireStatements()
        precondition(!database.isInTransaction, "write transactions do not nest")
        let batch = ManifestBatch(database: database, statements: statements,
                                  recordsEvictions: options.onEviction != nil)
        hooks.writeWillBegin.run()
        try statements.begin.run { try $0.execute() }  // waits up to the busy timeout
        // The pending writes become the batch this transaction applies. Readers find
        // them there, without the store's lock, until the commit has returned.
        let (writes, times) = buffer.withLock { $0.takeWritesForStoreConnection() }
        let result: Result
        let committed: Transaction
        do {
            if writes.hasSets, let checkpointer {
                do {
                    try checkpointer.admitGrowth(of: writes, on: database)
                } catch {
                    try? database.execute("ROLLBACK")
                    throw error
                }
            }
            (result, committed) = try batch.commit(
                writes, accessTimes: times.map { ($0.key.string, $0.value) },
                extendsExpirationOnAccess: options.extendsExpirationOnAccess, body)
        } catch {
            _ = try? refreshCommittedTotals()
            let disposition = commitFailed(error, writes: writes, accessTimes: times, batch: .storeConnection)
            throw CommitFailure(error: error, disposition: disposition)
        }
        buffer.withLock {
            $0.settle(.storeConnection, totals: committed.current, changes: committed.changes, countsCommit: true)
        }
        for name in committed.changes.obsoleteFiles { files.remove(name) }
        evictionReporter?.report(committed.changes.evictions)
        return result
    }

    // MARK: - Failure

    /// A commit failed and was rolled back, on either connection: applies the failure
    /// policy (`GroupCommitter.disposition`) to its writes and access times, and ends
    /// `batch` in the lock hold that puts back what it keeps (`WriteBuffer.State.requeue`),
    /// so a write is never in neither place.
    @discardableResult
    func commitFailed(_ error: Error, writes: PendingWrites, accessTimes: [ByteWiseKey: Double],
                      batch: WriteBuffer.State.Batch) -> GroupCommitter.Disposition {
        var kept = writes
        let disposition = GroupCommitter.disposition(of: error, removesEntries: writes.hasRemovals,
                                                     giveSpaceBack: giveSpaceBack)
        switch disposition {
        case .retry:
            break
        case .keepRemovals:
            let (dropped, droppedSets) = kept.keepRemovalsOnly()
            for name in dropped { files.remove(name) }
            if droppedSets > 0 { recordDroppedWrites(error) }
        case .drop:
            for name in writes.files { files.remove(name) }
            // Writes already acknowledged to the caller are lost: say so on the next
            // write and the next flush (not for a read's housekeeping removals).
            if writes.hasCallerWrites { recordDroppedWrites(error) }
            kept = PendingWrites()
        }
        // Access times are housekeeping: they go back with the writes, and are dropped
        // with them, so they cannot fail every commit.
        let superseded = buffer.withLock {
            $0.requeue(batch, keeping: kept, accessTimes: accessTimes, keepsAccessTimes: disposition != .drop)
        }
        for name in superseded { files.remove(name) }
        return disposition
    }

    /// Records that acknowledged writes were lost, for the next write and the next flush to throw.
    func recordDroppedWrites(_ error: Error) {
        droppedWritesError = error
        flushError = error
    }

    /// Throws (once) the error of a commit that dropped acknowledged writes.
    func throwDroppedWritesError() throws {
        if let error = droppedWritesError {
            droppedWritesError = nil
            throw error
        }
    }

    /// Forgets the pending writes and deletes the files written for them.
    func dropPendingWrites() {
        for name in buffer.withLock({ $0.dropPending() }) { files.remove(name) }
    }

    /// Settles the batch in flight and closes the commit connection.
    func closeCommitter() {
        settleDetachedCommit()
        groupCommitter.close()
    }
}
