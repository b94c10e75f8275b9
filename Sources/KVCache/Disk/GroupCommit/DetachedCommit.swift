import Dispatch

/// A group commit running on the commit connection, outside the cache's lock.
///
/// The store hands its pending writes and access times over under the lock
/// (`KVStorage.detachCommit`); the SQLite work — inserting rows, updating the
/// indexes, writing the WAL — then runs on another thread while callers keep
/// reading and writing; whoever next needs the store's connection, or the
/// commit's result, settles it under the lock (`KVStorage.settleDetachedCommit`).
/// Until then reads find the batch's writes in the batch itself.
///
/// A batch may also carry `work`: statements of a write of many rows (a trim step,
/// removeAll, a step of `removeAll(progress:)`), run in the same transaction after the writes,
/// so that it too commits without the cache's lock (`DiskCache.performWork`).
final class DetachedCommit: Sendable {
    /// Statements run inside the batch's transaction, after its writes; returns a count
    /// (rows removed) for the caller.
    typealias Work = @Sendable (inout KVStorage.Transaction) throws -> Int

    let writes: PendingWrites
    /// Keyed byte-wise, like the buffer they came from.
    let accessTimes: [ByteWiseKey: Double]
    let work: Work?
    /// True for removeAll's batch: once it has committed, the data folder is swapped
    /// for an empty one when the batch is settled (`KVStorage.swapDataFolder`).
    let emptiesDataFolder: Bool
    /// What the failure policy did with the writes of a failed batch, once settled.
    let disposition = MutexBox<GroupCommitter.Disposition?>(nil)
    private let applied = DispatchGroup()
    private let result = MutexBox<Result<Outcome, Error>?>(nil)

    struct Outcome: Sendable {
        /// The writes' and the work's changes together.
        var changes: ManifestBatch.Changes
        /// The stats row as this commit left it (other processes' commits included).
        var totals: KVStorage.Totals
        /// What `work` returned (0 without work).
        var workResult = 0
    }

    init(writes: PendingWrites, accessTimes: [ByteWiseKey: Double], work: Work? = nil,
         emptiesDataFolder: Bool = false) {
        self.writes = writes
        self.accessTimes = accessTimes
        self.work = work
        self.emptiesDataFolder = emptiesDataFolder
        applied.enter()
    }

    /// Runs the commit on `connection`; called once, never under the cache's lock.
    func apply(on connection: CommitConnection, extendsExpirationOnAccess: Bool) {
        let outcome = Result {
            try connection.commit(writes, accessTimes: accessTimes.map { ($0.key.string, $0.value) },
                                  extendsExpirationOnAccess: extendsExpirationOnAccess, work: work)
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
