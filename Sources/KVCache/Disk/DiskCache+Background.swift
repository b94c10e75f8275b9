import Dispatch
import Foundation

/// Background work of a store: at open (trash deletion, the orphan sweep), on a period
/// (auto-trim, metrics), and the trims to the limits and sweeps that calls schedule
/// (`scheduleFollowUps`, in `DiskCache+StoreLock.swift`).
extension DiskCache {
    func startBackgroundWorkAtOpen() {
        if configuration.isReadOnly { return }
        // Never at open itself: a sweep lists every file, and open must stay flat in the store's size.
        backgroundQueue.async(group: backgroundWork) { [weak self] in
            guard let self else { return }
            self.removeStaleTrash()
            _ = self.diagnostics.attempt("the orphan sweep", path: self.path) {
                    try self.sweepOrphans(gracePeriod: self.configuration.orphanGracePeriod)
                }
        }
        scheduleAutoTrim()
        #if Metrics
        scheduleMetricsReport()
        #endif
    }

    /// Deletes the data folders an earlier removeAll left in the trash (this process's, or
    /// one that ended before deleting them). Only folders named as removeAll names them, and
    /// in them only the store's files. A folder whose files are still coming back to the new
    /// data folder (`KVStorage.returningSuffix`, locked by its swap) is left to that swap;
    /// one whose swap ended mid-way (a crash freed its lock) is deleted.
    func removeStaleTrash() {
        Self.removeStaleTrash(in: store.withLock { $0.trashPath })
    }

    /// The same for the trash folder at `trashPath`; callable under the store's lock.
    static func removeStaleTrash(in trashPath: String) {
        for entry in (try? FileStore.entries(of: trashPath)) ?? [] {
            let path = trashPath + "/" + entry.name
            if FileNameHash.isFileName(entry.name) {
                FileStore.removeDataFolder(path)
            } else if entry.name.hasSuffix(KVStorage.returningSuffix),
                      FileNameHash.isFileName(String(entry.name.dropLast(KVStorage.returningSuffix.count))),
                      let lock = FileStore.lockFolder(path, wait: false) {
                FileStore.removeDataFolder(path)
                Glibc.close(lock)
            }
        }
    }

    #if Metrics
    /// Exports the statistics every `metricsInterval` while the cache is open.
    private func scheduleMetricsReport() {
        guard metrics != nil else { return }
        backgroundQueue.asyncAfter(deadline: .now() + min(configuration.metricsInterval.seconds, Seconds.never)) { [weak self] in
            guard let self, !self.isClosed else { return }
            self.reportMetrics()
            self.scheduleMetricsReport()
        }
    }
    #endif

    private func scheduleAutoTrim() {
        guard let interval = configuration.autoTrimInterval?.seconds, !Seconds.isNever(interval) else { return }
        backgroundQueue.asyncAfter(deadline: .now() + interval) { [weak self] in
            guard let self, !self.isClosed else { return }
            self.trimToLimits(periodic: true)
            self.scheduleAutoTrim()
        }
    }

    var isClosed: Bool { store.withLock { $0.isClosed } }

    /// Trims to the limits' low watermark; the periodic run also removes expired
    /// and too-old entries and keeps the free-space limit.
    func trimToLimits(periodic: Bool) {
        let setsAtStart = reader.buffer.withLock { $0.counters.sets }
        var removed = 0
        defer { finishLimitTrim(madeProgress: removed > 0, setsAtStart: setsAtStart) }
        if periodic {
            _ = diagnostics.attempt("removing expired entries", path: path) { try runTrim(.expired, reason: .expired) }
            if let ageLimit = configuration.ageLimit {
                _ = diagnostics.attempt("the age trim", path: path) {
                    try runTrim(.age(ageLimit.seconds), reason: .expired)
                }
            }
        }
        guard let totals = diagnostics.attempt("reading the totals for a limit trim", path: path, {
            try perform(needs: .committed) { try $0.totals() }
        }) else { return }
        if totals.count > configuration.countLimit {
            let target = Int(Double(configuration.countLimit) * configuration.lowWatermark)
            removed += diagnostics.attempt("the count trim", path: path) { try runTrim(.count(target), reason: .count) } ?? 0
        }
        if totals.size > configuration.sizeLimit {
            let target = Int64(Double(configuration.sizeLimit) * configuration.lowWatermark)
            removed += diagnostics.attempt("the size trim", path: path) { try runTrim(.size(target), reason: .cost) } ?? 0
        }
        if periodic, configuration.freeDiskSpaceLimit > 0 {
            _ = diagnostics.attempt("the free-space trim", path: path) {
                try trim(toFreeSpace: configuration.freeDiskSpaceLimit)
            }
        }
    }

    /// Commits made while a limit trim ran skipped their own check (one trim at a
    /// time), so the limits are checked again before the trim is marked done. It
    /// retries only if it removed something or values were set meanwhile, so a
    /// store that cannot trim does not spin.
    func finishLimitTrim(madeProgress: Bool, setsAtStart: Int) {
        let again = store.withLock { storage -> Bool in
            let setMeanwhile = storage.buffer.withLock { $0.counters.sets } != setsAtStart
            if madeProgress || setMeanwhile,
               storage.exceeds(countLimit: configuration.countLimit, sizeLimit: configuration.sizeLimit) {
                return true
            }
            storage.isLimitTrimScheduled = false
            return false
        }
        // Enqueued from within the group's own work, so `waitForBackgroundWork()` waits for it too.
        if again { backgroundQueue.async(group: backgroundWork) { [weak self] in self?.trimToLimits(periodic: false) } }
    }

    /// Commits pending writes, then blocks until the background work started so
    /// far (orphan sweeps, trash deletion, trims to the limits, WAL checkpoints) is done.
    /// For tests and tools: no sleeping.
    public func waitForBackgroundWork() {
        // Committing may itself start a trim (limits are checked on committed totals).
        let checkpointer = try? perform(needs: .committed) { storage -> WALCheckpointer? in
            try storage.commit()
            return storage.checkpointer
        }
        backgroundWork.wait()
        checkpointer?.waitForCheckpoint()
        store.withLock { $0.evictionReporter }?.waitForReports()
    }

    /// Deletes the files in the data folder that no entry references, now, and
    /// returns how many. Files younger than `gracePeriod` (default:
    /// `configuration.orphanGracePeriod`) are kept, since another process may be
    /// about to commit their rows; pass `.zero` when no other process uses the directory.
    /// Throws `KVCacheError.invalidArgument` for a negative period.
    @discardableResult
    public func sweepOrphans(gracePeriod: Duration? = nil) throws -> Int {
        let gracePeriod = gracePeriod ?? configuration.orphanGracePeriod
        try Validation.check(gracePeriod >= .zero, "sweepOrphans(gracePeriod:) needs a period of at least zero")
        let grace = gracePeriod.seconds
        let files = try perform { storage -> FileStore in
            _ = try storage.requireDatabase()
            return storage.files
        }
        // Listed without the lock: a file this process writes gets its row under the
        // same lock hold, so by the time a chunk is checked the row is visible.
        let names = try files.names()
        let cutoff: Double? = grace > 0 ? KVStorage.wallClock() - grace : nil
        var removed = 0
        var start = 0
        while start < names.count {
            let chunk = Array(names[start..<min(start + 512, names.count)])
            removed += try perform { try $0.removeOrphans(among: chunk, modifiedAfterIsKept: cutoff) }
            start += 512
        }
        return removed
    }
}
