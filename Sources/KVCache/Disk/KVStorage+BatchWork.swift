import Foundation

/// `DiskCache.setValues`: many sets in one transaction, as the work of a batch on the
/// commit connection (see `DiskCache.performWork`).
extension KVStorage {
    /// One value of a batch: inline bytes, or the file it was written to (reserved).
    struct BatchValue: Sendable {
        var key: String
        var size: Int
        var filename: String?
        var inline: Data?
    }

    /// The work that stores `values` in the batch's transaction, after its pending
    /// writes; returns how many. Its files are complete; replaced rows' files go after
    /// the commit.
    func setValuesWork(_ values: [BatchValue], expiration: Expiration) -> DetachedCommit.Work {
        let now = options.clock()
        let writes = buffer.withLock { state -> PendingWrites in
            var writes = PendingWrites(capacity: values.count)
            for value in values {
                let stored = ManifestRow(filename: value.filename, inline: value.inline, size: Int64(value.size),
                                         accessed: state.stamp(now), deadline: expiration.deadline(from: now),
                                         lifetime: expiration.extendableLifetime)
                _ = writes.record(.set(stored), forKey: value.key)
            }
            return writes
        }
        return { transaction in
            try ManifestBatch(database: transaction.database, statements: transaction.statements,
                              recordsEvictions: transaction.recordsEvictions)
                .apply(writes, into: &transaction)
            return writes.count
        }
    }
}

/// `DiskCache.setValueIfAbsent` (python-diskcache's `add`): the check and the insert in
/// one write transaction, as the work of a batch on the commit connection (see
/// `DiskCache.performWork`). SQLite's write lock serializes it with every other
/// process's commits, so of all the callers in all the processes one stores the key.
extension KVStorage {
    /// What the work of `setValueIfAbsentWork` did.
    enum AddOutcome: Int {
        /// A live row was there: nothing stored.
        case present = 0
        /// No live row was there: the value's row stored (an expired one it replaced is
        /// counted and reported as a replacement by the commit, as a set's).
        case stored = 1
    }

    /// The work that stores `value` for its key unless the manifest holds a live row for
    /// it, in the batch's transaction, after this process's pending writes and access
    /// times (so a pending set or removal of the key, and an expiration extended by a
    /// buffered read, count); returns an `AddOutcome`'s raw value. Expired means a
    /// deadline at or before the clock when the transaction runs, as reads and trims
    /// judge it. A file value's file is complete; a replaced expired row's file goes
    /// after the commit.
    func setValueIfAbsentWork(_ value: BatchValue, expiration: Expiration,
                              extendedData: Data?) -> DetachedCommit.Work {
        let clock = options.clock
        let now = clock()
        let stored = buffer.withLock { state in
            ManifestRow(filename: value.filename, inline: value.inline, size: Int64(value.size),
                        accessed: state.stamp(now), deadline: expiration.deadline(from: now),
                        lifetime: expiration.extendableLifetime, extendedData: extendedData)
        }
        let key = value.key
        return { transaction in
            let batch = ManifestBatch(database: transaction.database, statements: transaction.statements,
                                      recordsEvictions: transaction.recordsEvictions)
            // Under the write lock: no other process's commit can come between this
            // look and the insert.
            if let old = try batch.metadata(forKey: key), old.isLive(at: clock()) {
                return AddOutcome.present.rawValue
            }
            var writes = PendingWrites(capacity: 1)
            _ = writes.record(.set(stored), forKey: key)
            try batch.apply(writes, into: &transaction)
            return AddOutcome.stored.rawValue
        }
    }
}
