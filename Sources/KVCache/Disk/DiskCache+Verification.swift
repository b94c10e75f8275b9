import Foundation

extension DiskCache {
    /// Checks the cache directory and, with `repair`, fixes what it finds.
    ///
    /// The checks: SQLite's integrity check of the manifest; every file value's file
    /// (present, of the recorded size; contents are not read); every inline value's size; files in the `data`
    /// folder that no entry references (orphans); the maintained summary of counts and
    /// sizes. The repairs: reindex, or move a damaged manifest aside and start empty;
    /// remove entries whose file or inline data is missing or of the wrong size; delete orphans;
    /// recount the summary.
    ///
    /// Unreferenced files younger than `orphanGracePeriod` (default: the
    /// configuration's) are not orphans: another process may be about to commit their
    /// entries. Pass `.zero` when no other process writes to the directory; a negative
    /// period throws `KVCacheError.invalidArgument`.
    ///
    /// Scans the whole store, so it is for tools and maintenance. The lock is released
    /// between steps, so other callers keep working; `progress` is called on the
    /// calling thread between steps.
    public func verify(repair: Bool = false, orphanGracePeriod: Duration? = nil,
                       progress: (VerificationProgress) -> Void = { _ in }) throws -> VerificationReport {
        if repair, configuration.isReadOnly { throw KVCacheError.readOnly(path: path) }
        let gracePeriod = orphanGracePeriod ?? configuration.orphanGracePeriod
        try Validation.check(gracePeriod >= .zero, "verify(orphanGracePeriod:) needs a period of at least zero")
        let grace = gracePeriod.seconds
        var report = VerificationReport()
        var repairs = Repairs()
        try runChecks(&report, gracePeriod: grace, repair: repair, repairs: &repairs, progress: progress)
        if repair { report.repairs = repairs }
        return report
    }

    private func runChecks(_ report: inout VerificationReport, gracePeriod: Double, repair: Bool,
                           repairs: inout Repairs, progress: (VerificationProgress) -> Void) throws {
        var attempt = 0
        while true {
            do {
                if attempt == 0 {
                    try checked(needs: .committed) { try $0.commit() }
                    progress(VerificationProgress(phase: .integrity, completed: 0, total: 1))
                    // A scan of the whole store: on the checkpoint connection, without the lock.
                    report.integrityErrors = try unlocked { checkpointer in
                        try checkpointer.withConnection { database in
                            hooks.verifyWillScan.run()
                            return try KVStorage.integrityErrors(on: database)
                        }
                    } ?? checked { try $0.integrityErrors() }
                    progress(VerificationProgress(phase: .integrity, completed: 1, total: 1))
                    if !report.integrityErrors.isEmpty {
                        // Other checks on a damaged manifest would only repeat its errors.
                        guard repair else { return }
                        try repairIntegrity(&repairs)
                    }
                }
                try verifyFiles(&report, repair: repair, repairs: &repairs, progress: progress)
                try verifyOrphans(&report, gracePeriod: gracePeriod, repair: repair, repairs: &repairs,
                                  progress: progress)
                try verifySummary(&report, repair: repair, repairs: &repairs, progress: progress)
                return
            } catch let corruption as CorruptionFound {
                // Damage the integrity check did not show (or that appeared since).
                report.integrityErrors.append(corruption.message)
                guard repair, attempt == 0 else { return }
                if !corruption.isRebuilt { try checked { try $0.rebuildAfterCorruption() } }
                repairs.rebuiltManifest = true
                attempt += 1
            }
        }
    }

    /// Rows checked per lock hold.
    private static let verifyStep = 512

    private func repairIntegrity(_ repairs: inout Repairs) throws {
        do {
            try repairStep(KVStorage.reindexWork)
            repairs.reindexed = true
            if try checked({ try $0.integrityErrors() }).isEmpty { return }
        } catch let corruption as CorruptionFound {
            // Beyond what reindexing fixes: rebuild below (if settling its commit has not).
            if corruption.isRebuilt {
                repairs.rebuiltManifest = true
                return
            }
        }
        try checked { try $0.rebuildAfterCorruption() }
        repairs.rebuiltManifest = true
    }

    private func verifyFiles(_ report: inout VerificationReport, repair: Bool, repairs: inout Repairs,
                             progress: (VerificationProgress) -> Void) throws {
        let total = try checked(needs: .committed) { try $0.totals().fileCount }
        progress(VerificationProgress(phase: .files, completed: 0, total: total))
        var after: String?
        var checkedCount = 0
        while true {
            let (rows, damaged, broken) = try checked { storage in
                let rows = try storage.fileRows(after: after, limit: Self.verifyStep)
                var broken: [KVStorage.Victim] = []
                var damaged: [DamagedEntry] = []
                for row in rows {
                    guard let name = row.filename,
                          try storage.checkFile(name, expectedSize: row.size) != .intact else { continue }
                    let check = try storage.confirmBroken(row)
                    let actual: Int64?
                    switch check {
                    case .intact: continue
                    case .missing: actual = nil
                    case .wrongSize(let size): actual = size
                    }
                    broken.append(row)
                    damaged.append(DamagedEntry(key: row.key, fileName: name, expectedSize: row.size, actualSize: actual))
                }
                return (rows, damaged, broken)
            }
            // Rows confirmed broken above; the work deletes a row only if it still names that file.
            let removed = repair && !broken.isEmpty ? try repairStep(KVStorage.removeBrokenRowsWork(broken)) : 0
            guard let last = rows.last else { break }
            after = last.filename
            checkedCount += rows.count
            for entry in damaged {
                if entry.actualSize == nil { report.missingFiles.append(entry) } else { report.wrongSizeFiles.append(entry) }
            }
            repairs.removedEntries += removed
            progress(VerificationProgress(phase: .files, completed: checkedCount, total: max(total, checkedCount)))
        }
        report.checkedFiles += checkedCount
        try verifyInlineValues(&report, repair: repair, repairs: &repairs)
    }

    private func verifyInlineValues(_ report: inout VerificationReport, repair: Bool, repairs: inout Repairs) throws {
        var after: String?
        repeat {
            let (last, damaged) = try checked { storage in
                try storage.damagedInlineRows(after: after, limit: Self.verifyStep * 8)
            }
            // The work deletes a row only if it is still damaged.
            let removed = repair && !damaged.isEmpty
                ? try repairStep(KVStorage.removeDamagedInlineRowsWork(damaged.map(\.key))) : 0
            report.damagedInlineEntries += damaged
            repairs.removedEntries += removed
            after = last
        } while after != nil
    }

    private func verifyOrphans(_ report: inout VerificationReport, gracePeriod: Double, repair: Bool,
                               repairs: inout Repairs, progress: (VerificationProgress) -> Void) throws {
        // Listed without the lock, as the orphan sweep does: a file this process writes
        // gets its pending write under the same lock hold, so the check below sees it.
        let names = try checked { $0.files }.names()
        let cutoff: Double? = gracePeriod > 0 ? KVStorage.wallClock() - gracePeriod : nil
        progress(VerificationProgress(phase: .orphans, completed: 0, total: names.count))
        var start = 0
        while start < names.count {
            let chunk = Array(names[start..<min(start + Self.verifyStep, names.count)])
            let (orphans, recent, removed) = try checked { storage in
                var orphans: [String] = []
                var recent: [String] = []
                for name in try storage.unreferencedFiles(among: chunk) {
                    guard let modified = storage.files.modificationTime(name) else { continue }  // gone meanwhile
                    if let cutoff, modified > cutoff { recent.append(name) } else { orphans.append(name) }
                }
                let removed = repair && !orphans.isEmpty
                    ? try storage.removeOrphans(among: orphans, modifiedAfterIsKept: cutoff) : 0
                return (orphans, recent, removed)
            }
            report.orphanFiles += orphans
            report.recentUnreferencedFiles += recent
            repairs.removedOrphanFiles += removed
            start += chunk.count
            progress(VerificationProgress(phase: .orphans, completed: start, total: names.count))
        }
    }

    private func verifySummary(_ report: inout VerificationReport, repair: Bool, repairs: inout Repairs,
                               progress: (VerificationProgress) -> Void) throws {
        progress(VerificationProgress(phase: .summary, completed: 0, total: 1))
        let totals = try unlocked { try $0.withConnection { try KVStorage.recordedAndCountedTotals(on: $0) } }
            ?? checked { try $0.recordedAndCountedTotals() }
        if totals.recorded != totals.counted {
            report.summaryIsAccurate = false
            if repair {
                try repairStep(KVStorage.recountWork, countsBrokenRows: false)
                repairs.recountedSummary = true
            }
        }
        progress(VerificationProgress(phase: .summary, completed: 1, total: 1))
    }

    /// Runs a repair's statements on the commit connection, without the lock (see
    /// `performWork`); returns what `work` returned, counted as broken rows removed.
    @discardableResult
    private func repairStep(_ work: @escaping DetachedCommit.Work, countsBrokenRows: Bool = true) throws -> Int {
        do {
            return try performWork(freesSpace: false, retriesCorruption: false, prepare: { _ in work }) {
                storage, removed in
                if countsBrokenRows { storage.buffer.withLock { $0.counters.brokenRows += removed } }
            }
        } catch let rebuilt as KVStorage.RebuiltAfterCorruption {
            throw CorruptionFound(message: rebuilt.message, isRebuilt: true)
        }
    }

    /// SQLite reported corruption during a verification.
    private struct CorruptionFound: Error {
        var message: String
        /// True when the manifest was rebuilt already (by the repair step that met it).
        var isRebuilt = false
    }

    /// Runs `body` with the store's checkpointer, without the store's lock (nil if the
    /// store has none: read-only); errors are mapped as `checked` maps them.
    private func unlocked<Result>(_ body: (WALCheckpointer) throws -> Result?) throws -> Result? {
        guard let checkpointer = try checked({ $0.checkpointer }) else { return nil }
        do {
            return try body(checkpointer)
        } catch let error as SQLiteError {
            if error.isCorruption { throw CorruptionFound(message: error.message) }
            // That connection does not wait for locks: busy, the step runs under the lock.
            if GroupCommitter.isTransient(error) { return nil }
            throw error.kvCacheError(path: path + "/manifest.sqlite")
        }
    }

    /// Runs `body` on the store under the lock. Unlike `perform`, corruption is
    /// reported (as `CorruptionFound`), never repaired behind the caller's back.
    private func checked<Result>(needs need: KVStorage.WriterNeed = .nothing,
                                 _ body: (KVStorage) throws -> Result) throws -> Result {
        try withStoreLock(needs: need) { storage in
            do {
                return try body(storage)
            } catch let error as SQLiteError {
                if error.isCorruption { throw CorruptionFound(message: error.message) }
                throw error.kvCacheError(path: storage.manifestPath)
            }
        }
    }
}
