/// Applies a batch of pending writes and access times to one connection, inside
/// its open write transaction, and records what the commit changes. Shared by the
/// store's own connection (`KVStorage.write`) and the commit connection
/// (`DetachedCommit`), so both write rows, and commit, the same way (`commit`).
struct ManifestBatch {
    let database: Database
    let statements: ManifestStatements
    /// Whether `Changes.evictions` lists the keys removed (only with an `onEviction`).
    var recordsEvictions = false

    /// What a transaction changed (`KVStorage.Transaction.changes`), for the owner to
    /// account for after the commit.
    struct Changes: Sendable {
        /// Change to the totals, added to the stats row before the commit.
        var delta = KVStorage.Totals.zero
        /// Files of replaced or removed rows: deleted only after the commit.
        var obsoleteFiles: [String] = []
        /// Rows a set replaced, and expired rows a conditional removal deleted.
        var replaced = 0
        var expired = 0
        /// The entries removed, if the transaction records them.
        var evictions: [Eviction] = []
    }

    /// Inside a write transaction begun on `database`: applies `writes`, then the
    /// access times, runs `body` (a trim step, a repair), adds the change to the stats
    /// row and commits. On failure it rolls back and throws. The returned transaction
    /// holds the whole change: the writes' and the body's.
    func commit<Result>(_ writes: PendingWrites, accessTimes: [(key: String, time: Double)],
                        extendsExpirationOnAccess: Bool,
                        _ body: (inout KVStorage.Transaction) throws -> Result)
        throws -> (result: Result, transaction: KVStorage.Transaction) {
        do {
            // We hold the write lock: these totals include other processes' commits.
            var transaction = KVStorage.Transaction(database: database, statements: statements,
                                                    recordsEvictions: recordsEvictions, start: try readTotals())
            if !writes.isEmpty { try apply(writes, into: &transaction) }
            if !accessTimes.isEmpty { try apply(accessTimes: accessTimes, extends: extendsExpirationOnAccess) }
            let result = try body(&transaction)
            try addToStats(transaction.changes.delta)
            try statements.commit.run { try $0.execute() }
            return (result, transaction)
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            throw error
        }
    }

    /// Applies `writes` in `transaction` (begun on this batch's connection), recording
    /// what they change in it.
    func apply(_ writes: PendingWrites, into transaction: inout KVStorage.Transaction) throws {
        // New rows' totals, added once (the loop only adds; a failure discards it all).
        var inserted = KVStorage.Totals.zero
        defer { transaction.changes.delta = transaction.changes.delta + inserted }
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
                    transaction.recordRemoved(size: old.size, file: old.filename, key: key, reason: .replaced)
                    transaction.changes.replaced += 1
                }
                transaction.changes.delta.add(size: value.size, isFile: value.filename != nil)
            case .remove, .removeIfExpired, .removeIfFile:
                guard let old, write.removes(old), try deleteRow(key: key) else { continue }
                switch write {
                case .removeIfExpired:
                    transaction.recordRemoved(size: old.size, file: old.filename, key: key, reason: .expired)
                    transaction.changes.expired += 1
                case .remove:
                    transaction.recordRemoved(size: old.size, file: old.filename, key: key, reason: .removed)
                default:
                    // A broken row a read found: not an eviction.
                    transaction.recordRemoved(size: old.size, file: old.filename)
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
    func metadata(forKey key: String) throws -> ManifestRow? {
        try ManifestRow.selectMetadata(key, with: statements.selectMetadata)
    }

    /// Deletes `key`'s row; false if there was none.
    private func deleteRow(key: String) throws -> Bool {
        try statements.deleteKey.run { statement in
            try statement.bind(key, at: 1)
            try statement.execute()
        }
        return database.changes > 0
    }

    /// Binds a pending value to an insert or upsert (same parameters) and runs it.
    /// The key and the bytes are bound in place: SQLite copies them into the row anyway.
    private func bind(_ statement: Statement, key: String, value: ManifestRow) throws {
        try statement.run { statement in
            try statement.bind(value.filename, at: 2)
            try statement.bind(value.size, at: 3)
            try statement.bind(value.accessed, at: 4)
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
