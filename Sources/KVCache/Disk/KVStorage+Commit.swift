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
    func write<Result>(_ body: () throws -> Result) throws -> Result {
        let database = try requireDatabase()
        let statements = try requireStatements()
        precondition(transaction == nil, "write transactions do not nest")
        try statements.begin.run { try $0.execute() }
        transaction = Transaction()
        let result: Result
        do {
            // We hold the write lock: these totals include other processes' commits.
            committedTotals = try readTotals()
            try applyPendingWrites()
            try applyAccessTimes()
            result = try body()
            let delta = transaction!.delta
            if delta != .zero {
                try statements.addToStats.run { statement in
                    statement.bind(delta.count, at: 1)
                    statement.bind(delta.size, at: 2)
                    statement.bind(delta.fileCount, at: 3)
                    statement.bind(delta.fileSize, at: 4)
                    try statement.execute()
                }
            }
            try statements.commit.run { try $0.execute() }
        } catch {
            transaction = nil
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            if let totals = try? readTotals() { committedTotals = totals }
            counters.failedCommits += 1
            if !Self.isTransient(error) {
                // Writes already acknowledged to the caller are lost: say so on the
                // next write and the next flush, whichever path ran this commit.
                if !pending.isEmpty {
                    droppedWritesError = error
                    flushError = error
                }
                dropPendingWrites()
            }
            throw error
        }
        let committed = transaction!
        transaction = nil
        committedTotals = committedTotals + committed.delta
        pending.removeAll()
        counters.commits += 1
        for name in committed.obsoleteFiles { files.remove(name) }
        return result
    }

    static func isTransient(_ error: Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        return error.code == SQLITE_BUSY || error.code == SQLITE_LOCKED || error.isCorruption
    }

    /// Commits pending writes and access times, if any.
    func commit() throws {
        guard !pending.isEmpty || !accessTimes.isEmpty else { return }
        try write {}
    }

    /// Throws (once) the error of a commit that dropped acknowledged writes.
    func throwDroppedWritesError() throws {
        if let error = droppedWritesError {
            droppedWritesError = nil
            throw error
        }
    }

    func commitIfFull() throws {
        if pending.count >= options.groupCommitMaxWrites || pending.bytes >= options.groupCommitMaxBytes {
            try commit()
        }
    }

    /// Forgets the pending writes and deletes the files written for them.
    func dropPendingWrites() {
        for name in pending.files { files.remove(name) }
        pending.removeAll()
    }

    private func applyPendingWrites() throws {
        guard !pending.isEmpty else { return }
        let database = try requireDatabase()
        let insert = try requireStatements().insertNew
        let upsert = try requireStatements().upsert
        // New rows' totals, added to the transaction's delta once (the loop
        // only adds, so the order does not matter; a failure discards it all).
        var inserted = Totals.zero
        defer {
            let delta = transaction!.delta + inserted
            transaction!.delta = delta
        }
        for (byteWiseKey, write) in pending.writes {
            let key = byteWiseKey.string
            if case .set(let value) = write {
                // New keys (the common case) need no lookup of an old row.
                try bind(insert, key: key, value: value)
                if database.changes > 0 {
                    inserted.add(size: value.size, isFile: value.filename != nil)
                    continue
                }
            }
            let old = try storedMetadata(forKey: key)
            switch write {
            case .set(let value):
                try bind(upsert, key: key, value: value)
                if let old {
                    transaction!.delta.add(size: old.size, isFile: old.filename != nil, sign: -1)
                    if let oldFile = old.filename { transaction!.obsoleteFiles.append(oldFile) }
                    counters.evictions[.replaced, default: 0] += 1
                }
                transaction!.delta.add(size: value.size, isFile: value.filename != nil)
            case .remove:
                if let old { _ = try deleteRow(key: key, filename: old.filename, size: old.size) }
            case .removeIfExpired(let now):
                if let old, let expiration = old.expiration, expiration <= now,
                   try deleteRow(key: key, filename: old.filename, size: old.size) {
                    counters.evictions[.expired, default: 0] += 1
                }
            case .removeIfFile(let name):
                if let old, old.filename == name {
                    _ = try deleteRow(key: key, filename: old.filename, size: old.size)
                }
            }
        }
    }

    /// Binds a pending value to an insert or upsert (same parameters) and runs it.
    /// The key and the bytes are bound in place: SQLite copies them into the row anyway.
    private func bind(_ statement: Statement, key: String, value: PendingWrites.Value) throws {
        try statement.run { statement in
            statement.bind(value.filename, at: 2)
            statement.bind(value.size, at: 3)
            statement.bind(value.time, at: 4)
            statement.bind(value.deadline, at: 5)
            statement.bind(value.lifetime, at: 6)
            try statement.withBorrowedText(key, at: 1) {
                try statement.withBorrowedBlob(value.extendedData, at: 7) {
                    try statement.withBorrowedBlob(value.inline, at: 8) {
                        try statement.execute()
                    }
                }
            }
        }
    }

    /// Writes buffered access times inside the open transaction.
    private func applyAccessTimes() throws {
        guard !accessTimes.isEmpty else { return }
        let statement = try requireStatements().updateAccessTime
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

    /// Totals as of the last commit, plus the open transaction's changes.
    /// Pending writes are not counted until committed.
    var currentTotals: Totals { committedTotals + (transaction?.delta ?? .zero) }

    /// Current totals: commits pending writes, then reads the stats row
    /// (which also picks up other processes' commits).
    func totals() throws -> Totals {
        try commit()
        committedTotals = try readTotals()
        return committedTotals
    }

    func readTotals() throws -> Totals {
        try requireStatements().selectStats.run { statement in
            guard try statement.step() else { return .zero }
            return Totals(count: Int(statement.int64(at: 0)), size: statement.int64(at: 1),
                          fileCount: Int(statement.int64(at: 2)), fileSize: statement.int64(at: 3))
        }
    }

    /// Commits everything; `.synced` also makes it durable: the WAL is checkpointed
    /// and fsynced, and with `syncsFiles` the data folder is fsynced too.
    /// Throws the error of a commit that dropped acknowledged writes since the last flush.
    func flush(durability: DiskCache.Durability = .synced) throws {
        if let error = flushError {
            flushError = nil
            droppedWritesError = nil
            throw error
        }
        try commit()
        let database = try requireDatabase()
        guard durability == .synced else { return }
        try database.execute("PRAGMA wal_checkpoint(PASSIVE)")
        // A passive checkpoint may stop at another process's reader; syncing the
        // WAL itself makes every commit so far survive a power loss.
        FileStore.sync(path: manifestPath + "-wal")
        if options.syncsFiles { FileStore.sync(path: dataPath) }
    }
}
