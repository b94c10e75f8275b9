import Dispatch

/// A group commit running on the commit connection, outside the cache's lock.
///
/// The store hands its pending writes and access times over under the lock
/// (`KVStorage.detachCommit`); the SQLite work — inserting rows, updating the
/// indexes, writing the WAL — then runs on another thread while callers keep
/// reading and writing; whoever next needs the store's connection, or the
/// commit's result, settles it under the lock (`KVStorage.settleDetachedCommit`).
/// Until then reads find the batch's writes in the batch itself.
final class DetachedCommit: Sendable {
    let writes: PendingWrites
    /// Keyed byte-wise, like the buffer they came from.
    let accessTimes: [ByteWiseKey: Double]
    private let applied = DispatchGroup()
    private let result = MutexBox<Result<Outcome, Error>?>(nil)

    struct Outcome: Sendable {
        var changes: ManifestBatch.Changes
        /// The stats row as this commit left it (other processes' commits included).
        var totals: KVStorage.Totals
    }

    init(writes: PendingWrites, accessTimes: [ByteWiseKey: Double]) {
        self.writes = writes
        self.accessTimes = accessTimes
        applied.enter()
    }

    /// Runs the commit on `connection`; called once, never under the cache's lock.
    func apply(on connection: CommitConnection, extendsExpirationOnAccess: Bool) {
        let outcome = Result {
            try connection.commit(writes, accessTimes: accessTimes.map { ($0.key.string, $0.value) },
                                  extendsExpirationOnAccess: extendsExpirationOnAccess)
        }
        result.withLock { $0 = outcome }
        applied.leave()
    }

    /// True once `apply` has finished (never blocks).
    var isApplied: Bool { result.withLock { $0 != nil } }

    /// Blocks until `apply` has finished, and returns its result.
    func waitUntilApplied() -> Result<Outcome, Error> {
        applied.wait()
        return result.withLock { $0! }
    }
}
