import Dispatch

/// Calls under the store's lock, and the waits they leave for outside it.
///
/// A call declares what it needs from the commit connection (`KVStorage.WriterNeed`);
/// what it would otherwise wait for under the lock is handed out as a ticket (the
/// batch to wait for, `KVStorage.ticket(for:)`), waited for here without the lock,
/// and the call is asked again. Past the busy timeout it waits under the lock; a
/// batch with work (`performWork`) is tried three times. Each call ends with its
/// follow-ups (`scheduleFollowUps`): the group commit's schedule and timer, access-time
/// flushes, trims to the limits, the orphan sweep.
extension DiskCache {
    /// Runs `body` on the store under its lock, once what it `needs` from the commit
    /// connection is there. What it would wait for under the lock (the batch in flight,
    /// or a commit of the writes staged so far) is handed out as a ticket instead
    /// (`KVStorage.ticket(for:)`), waited for here without the lock, so other callers go
    /// on; then the store is asked again. Once the busy timeout has passed since the
    /// first wait, `body` runs and waits under the lock, as it did before.
    func withStoreLock<Result>(needs need: KVStorage.WriterNeed = .nothing,
                               _ body: (KVStorage) throws -> Result) throws -> Result {
        var deadline: Double?
        while true {
            var ticket: DetachedCommit?
            let result: Result? = try store.withLock { storage in
                storage.waitsOffLock = deadline.map { Condition.now() < $0 } ?? true
                defer { storage.waitsOffLock = false }
                ticket = try storage.ticket(for: need)
                return ticket == nil ? try body(storage) : nil
            }
            guard let ticket else { return result! }
            hooks.commitWillWaitOffLock.run()
            _ = ticket.waitUntilApplied()
            // Batches that other callers keep starting cannot hold this call off for longer.
            if deadline == nil { deadline = Condition.now() + configuration.busyTimeout.seconds }
        }
    }

    /// Runs a write of many rows (a trim step, a step of removeAll) without holding the
    /// store's lock while SQLite works: under the lock, `prepare` returns the work (nil:
    /// nothing to do, 0) and it starts on the commit connection with the pending writes;
    /// this call waits for it without the lock, while other callers go on; then, under
    /// the lock again, the batch is settled and `finish` accounts for the work's result.
    /// Without a commit connection it all runs under the lock, on the store's connection.
    /// `emptiesDataFolder`: removeAll's work, after whose commit the data folder is
    /// swapped. Unless `retriesCorruption`, a corrupt manifest (rebuilt when its batch
    /// was settled) throws `KVStorage.RebuiltAfterCorruption`.
    /// `needs`: `.committed` when `prepare` reads the totals (a trim); otherwise the
    /// pending writes commit with the work, in its batch.
    @discardableResult
    func performWork(freesSpace: Bool, emptiesDataFolder: Bool = false, retriesCorruption: Bool = true,
                     needs need: KVStorage.WriterNeed = .idleWriter,
                     prepare: (KVStorage) throws -> DetachedCommit.Work?,
                     finish: (KVStorage, Int) -> Void) throws -> Int {
        let tries = 3
        for attempt in 1...tries {
            enum Start {
                case done(Int)
                case started(DetachedCommit)
            }
            let start = try perform(needs: need) { storage -> Start in
                guard let work = try prepare(storage) else { return .done(0) }
                if let batch = try storage.startWork(work, emptiesDataFolder: emptiesDataFolder) {
                    return .started(batch)
                }
                let result: Int
                do {
                    result = try storage.write(freesSpace: freesSpace) { try work(&$0) }
                } catch let error as SQLiteError where error.isCorruption && !retriesCorruption {
                    // As a settled batch would: rebuilt, and said so.
                    try storage.rebuildAfterCorruption()
                    throw KVStorage.RebuiltAfterCorruption(message: error.message)
                }
                if emptiesDataFolder { storage.swapDataFolder() }
                finish(storage, result)
                return .done(result)
            }
            let batch: DetachedCommit
            switch start {
            case .done(let result): return result
            case .started(let started): batch = started
            }
            hooks.commitWillWaitOffLock.run()
            _ = batch.waitUntilApplied()
            let result = try perform { storage -> Int? in
                guard let result = try storage.finishWork(batch, freesSpace: freesSpace,
                                                          retriesCorruption: retriesCorruption,
                                                          isLastTry: attempt == tries)
                else { return nil }
                finish(storage, result)
                return result
            }
            if let result { return result }
        }
        preconditionFailure("the last try returns or throws")
    }

    /// Runs `body` on the store under the lock, once what it `needs` is there (see
    /// `withStoreLock`), maps SQLite errors to `KVCacheError`, rebuilds after corruption
    /// (retrying once), then schedules the group commit and other follow-up work.
    func perform<Result>(needs need: KVStorage.WriterNeed = .nothing,
                         _ body: (KVStorage) throws -> Result) throws -> Result {
        try withStoreLock(needs: need) { storage in
            defer { scheduleFollowUps(storage) }
            do {
                return try body(storage)
            } catch let error as SQLiteError {
                guard error.isCorruption else { throw error.kvCacheError(path: storage.manifestPath) }
                if storage.options.readOnly { throw KVCacheError.corrupt(path: storage.manifestPath, message: error.message) }
                do {
                    try storage.rebuildAfterCorruption()
                    return try body(storage)
                } catch let error as SQLiteError {
                    throw error.kvCacheError(path: storage.manifestPath)
                }
            }
        }
    }

    // MARK: - Follow-ups: what a call under the lock leaves to run after it

    /// Called under the lock after every operation; cheap when nothing is due.
    func scheduleFollowUps(_ storage: KVStorage) {
        if let (armAt, now) = storage.scheduleGroupCommit() { armCommitTimer(at: armAt, now: now) }
        guard !storage.isClosed else { return }
        // Decided in one hold of the buffer's lock, with whether a trim is due: readers,
        // which hold no store lock, schedule these flushes too (`DiskReader`).
        let limit = storage.options.accessBufferLimit
        let checksLimits = !storage.isLimitTrimScheduled
        let (flush, exceedsLimits) = storage.buffer.withLock { state -> (Bool?, Bool) in
            let exceeds = checksLimits
                && state.exceeds(countLimit: configuration.countLimit, sizeLimit: configuration.sizeLimit)
            guard !state.accessTimes.isEmpty else { return (nil, exceeds) }
            if state.accessTimes.count >= limit, !state.isUrgentAccessFlushScheduled {
                state.isUrgentAccessFlushScheduled = true
                return (true, exceeds)
            } else if !state.isAccessFlushScheduled {
                state.isAccessFlushScheduled = true
                return (false, exceeds)
            }
            return (nil, exceeds)
        }
        if let urgent = flush {
            if urgent {
                commitThread.async { [weak self] in self?.runAccessTimeFlush(urgent: true) }
            } else {
                commitThread.asyncAfter(seconds: configuration.accessTimeFlushInterval.seconds) { [weak self] in
                    self?.runAccessTimeFlush(urgent: false)
                }
            }
        }
        if exceedsLimits {
            storage.isLimitTrimScheduled = true
            backgroundQueue.async(group: backgroundWork) { [weak self] in self?.trimToLimits(periodic: false) }
        }
        if storage.needsOrphanSweep {
            storage.needsOrphanSweep = false
            backgroundQueue.async(group: backgroundWork) { [weak self] in
                guard let self else { return }
                _ = self.diagnostics.attempt("the orphan sweep", path: self.path) {
                    try self.sweepOrphans(gracePeriod: self.configuration.orphanGracePeriod)
                }
            }
        }
    }

    private func armCommitTimer(at deadline: Double, now: Double) {
        commitThread.asyncAfter(seconds: deadline - now) { [weak self] in self?.commitTimerFired() }
    }

    private func commitTimerFired() {
        let now = Condition.now()
        switch commitSchedule.timerFired(at: now) {
        case .idle:
            return
        case .rearm(let deadline):
            armCommitTimer(at: deadline, now: now)
        case .due:
            // The follow-ups of this call start or settle the commit, and re-arm.
            _ = try? perform { _ in }
        }
    }

    /// Schedules what a read left to do, on the commit thread: never on the reader's.
    func scheduleReadFollowUps(_ followUps: DiskReader.FollowUps) {
        if followUps.contains(.urgentAccessFlush) {
            commitThread.async { [weak self] in self?.runAccessTimeFlush(urgent: true) }
        }
        if followUps.contains(.accessFlush) {
            commitThread.asyncAfter(seconds: configuration.accessTimeFlushInterval.seconds) { [weak self] in
                self?.runAccessTimeFlush(urgent: false)
            }
        }
        if followUps.contains(.commit) {
            // The follow-ups of this call schedule the group commit of the queued removal.
            commitThread.async { [weak self] in
                _ = try? self?.perform { $0.buffer.withLock { $0.isCommitRequested = false } }
            }
        }
    }

    private func runAccessTimeFlush(urgent: Bool) {
        try? perform { storage in
            storage.buffer.withLock { state in
                if urgent { state.isUrgentAccessFlushScheduled = false } else { state.isAccessFlushScheduled = false }
            }
            // Written on the commit thread, as a group commit: a thousand UPDATEs under
            // the lock would hold up every reader. Behind a batch still committing, the
            // times stay buffered, and the next read schedules this again.
            try storage.commitInBackground()
        }
    }
}
