/// Applies a batch of pending writes and access times to one connection, inside
/// its open write transaction, and records what the commit changes. Shared by the
/// store's own connection (`KVStorage.write`) and the commit connection
/// (`DetachedCommit`), so both write rows, and commit, the same way (`commit`).
struct ManifestBatch {
    let database: Database
    let statements: ManifestStatements
    /// Whether `Changes.evictions` lists the keys removed (only with an `onEviction`).
    var recordsEvictions = false

    /// What applying a batch changed, for the owner to account for after the commit.
    struct Changes: Sendable {
        var delta = KVStorage.Totals.zero
        /// Files of replaced or removed rows: deleted only after the commit.
        var obsoleteFiles: [String] = []
        var replaced = 0
        var expired = 0
        /// The entries removed, if the batch records them.
        var evictions: [Eviction] = []
    }

    /// Inside a write transaction begun on `database`: applies `writes`, then the
    /// access times, runs `body` (a trim step, a repair), adds the change to the stats
    /// row and commits. On failure it rolls back and throws. The returned transaction
    /// holds the whole change: the writes' and the body's.
    func commit<Result>(_ writes: PendingWrites, accessTimes: [(key: String, time: Double)],
                        extendsExpirationOnAccess: Bool,
                        _ body: (inout KVStorage.Transaction) throws -> Result)
        throws -> (result: Result, transaction: KVStorage.Transaction, changes: Changes) {
        do {
            // We hold the write lock: these totals include other processes' commits.
            var transaction = KVStorage.Transaction(database: database, statements: statements,
                                                    recordsEvictions: recordsEvictions, start: try readTotals())
            var changes = Changes()
            if !writes.isEmpty { try apply(writes, into: &changes) }
            if !accessTimes.isEmpty { try apply(accessTimes: accessTimes, extends: extendsExpirationOnAccess) }
            transaction.delta = changes.delta
            transaction.obsoleteFiles = changes.obsoleteFiles
            transaction.evictions = changes.evictions
            let result = try body(&transaction)
            try addToStats(transaction.delta)
            try statements.commit.run { try $0.execute() }
            return (result, transaction, changes)
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            throw error
        }
    }

    func apply(_ writes: PendingWrites, into changes: inout Changes) throws {
        // New rows' totals, added once (the loop only adds; a failure discards it all).
        var inserted = KVStorage.Totals.zero
        defer { changes.delta = changes.delta + inserted }
        for (byteWiseKey, write) in writes.entries {
            let key = byteWiseKey.string
            if case .set(let value) = write {
                // New keys (the common case) need no lookup of an old row.
                try bind(statements.insertNew, key: key, value: value)
                if database.changes > 0 {
                    inserted.add(size: value.size, isFile: value.filename != nil)
                    continue
                }
            }
            let old = try metadata(forKey: key)
            switch write {
            case .set(let value):
                try bind(statements.upsert, key: key, value: value)
                if let old {
                    changes.delta.add(size: old.size, isFile: old.filename != nil, sign: -1)
                    if let oldFile = old.filename { changes.obsoleteFiles.append(oldFile) }
                    changes.replaced += 1
                    if recordsEvictions { changes.evictions.append(Eviction(key: key, reason: .replaced)) }
                }
                changes.delta.add(size: value.size, isFile: value.filename != nil)
            case .remove, .removeIfExpired, .removeIfFile:
                guard let old, write.removes(old), try deleteRow(key: key, old, into: &changes) else { continue }
                switch write {
                case .removeIfExpired:
                    changes.expired += 1
                    if recordsEvictions { changes.evictions.append(Eviction(key: key, reason: .expired)) }
                case .remove:
                    if recordsEvictions { changes.evictions.append(Eviction(key: key, reason: .removed)) }
                default:
                    break  // a broken row a read found: not an eviction
                }
            }
        }
    }

    /// Writes buffered access times (extending lifetimes if `extends`).
    func apply(accessTimes: [(key: String, time: Double)], extends: Bool) throws {
        let flag: Int64 = extends ? 1 : 0
        for (key, time) in accessTimes {
            try statements.updateAccessTime.run { statement in
                try statement.bind(time, at: 1)
                try statement.bind(flag, at: 2)
                try statement.bind(key, at: 3)
                try statement.execute()
            }
        }
    }

    /// Adds `delta` to the stats row.
    func addToStats(_ delta: KVStorage.Totals) throws {
        guard delta != .zero else { return }
        try statements.addToStats.run { statement in
            try statement.bind(delta.count, at: 1)
            try statement.bind(delta.size, at: 2)
            try statement.bind(delta.fileCount, at: 3)
            try statement.bind(delta.fileSize, at: 4)
            try statement.execute()
        }
    }

    func readTotals() throws -> KVStorage.Totals {
        try KVStorage.Totals.select(with: statements.selectStats)
    }

    /// The committed (or, inside the transaction, current) row's metadata.
    func metadata(forKey key: String) throws -> KVStorage.Metadata? {
        try KVStorage.Metadata.select(key, with: statements.selectMetadata)
    }

    @discardableResult
    private func deleteRow(key: String, _ old: KVStorage.Metadata, into changes: inout Changes) throws -> Bool {
        try statements.deleteKey.run { statement in
            try statement.bind(key, at: 1)
            try statement.execute()
        }
        guard database.changes > 0 else { return false }
        changes.delta.add(size: old.size, isFile: old.filename != nil, sign: -1)
        if let filename = old.filename { changes.obsoleteFiles.append(filename) }
        return true
    }

    /// Binds a pending value to an insert or upsert (same parameters) and runs it.
    /// The key and the bytes are bound in place: SQLite copies them into the row anyway.
    private func bind(_ statement: Statement, key: String, value: PendingWrites.Value) throws {
        try statement.run { statement in
            try statement.bind(value.filename, at: 2)
            try statement.bind(value.size, at: 3)
            try statement.bind(value.time, at: 4)
            try statement.bind(value.deadline, at: 5)
            try statement.bind(value.lifetime, at: 6)
            try statement.withBorrowedText(key, at: 1) {
                try statement.withBorrowedBlob(value.extendedData, at: 7) {
                    try statement.withBorrowedBlob(value.inline, at: 8) {
                        try statement.execute()
                    }
                }
            }
        }
    }
}
