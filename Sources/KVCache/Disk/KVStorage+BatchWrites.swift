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
