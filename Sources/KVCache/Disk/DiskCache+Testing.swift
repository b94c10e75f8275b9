import Foundation

/// What tests read and do inside the disk level, beside the pause points of
/// DiskTestHooks: a deliberate, small surface, so that tests do not depend on the
/// store's fields.
extension DiskCache {
    /// The group commit as the store's lock sees it.
    struct GroupCommitState {
        var pendingWrites: Int
        var bufferedAccessTimes: Int
        /// The batch on the commit connection, until it is settled.
        var batchInFlight: DetachedCommit?
    }

    var groupCommitState: GroupCommitState {
        store.withLock { storage in
            storage.buffer.withLock { state in
                GroupCommitState(pendingWrites: state.pending.count, bufferedAccessTimes: state.accessTimes.count,
                                 batchInFlight: state.detached)
            }
        }
    }

    /// Hands the pending writes over as the batch in flight without starting it: the
    /// test applies it (`DetachedCommit.apply(on:extendsExpirationOnAccess:)`) when and
    /// where it wants. Nil if there is nothing to hand over.
    func detachCommitWithoutStarting() throws -> (DetachedCommit, CommitConnection)? {
        try store.withLock { storage in
            guard let connection = storage.groupCommitter.connection,
                  let batch = try storage.detachCommit() else { return nil }
            return (batch, connection)
        }
    }

    /// Waits for the batch in flight, if any, and settles it, as the next call would.
    func settleCommit() {
        store.withLock { $0.settleDetachedCommit() }
    }

    /// Prepared statements the store's connection has cached, and how many of them are mid-step.
    var statementCounts: (cached: Int, busy: Int) {
        store.withLock { ($0.database?.cachedStatementCount ?? 0, $0.database?.busyStatementCount ?? 0) }
    }

    /// True if this cache's open marked the manifest as ours (created its schema, or
    /// adopted one from before the mark): of several processes creating one store at
    /// once, exactly one does. `package`: the multi-process test worker reports it.
    package var openMarkedTheManifest: Bool {
        store.withLock { $0.markedManifest }
    }

    /// The background WAL checkpointer (nil read-only or closed).
    var checkpointer: WALCheckpointer? {
        store.withLock { $0.checkpointer }
    }

    /// Runs `body` holding the store's lock, as a writer does (to show what does not wait for it).
    func withStoreLockHeld(_ body: () -> Void) {
        store.withLock { _ in body() }
    }

    /// The first half of a file value's set (see `setValue`): a reserved fresh name,
    /// for the caller to write the file to.
    func reserveFileName(forKey key: String, size: Int) throws -> String? {
        try store.withLock { try $0.reserveFileName(forKey: key, size: size) }
    }

    /// The second half: records the file written to a reserved name.
    func recordFileValue(_ data: Data, writtenTo name: String, forKey key: String) throws {
        try store.withLock {
            try $0.setValue(data, writtenTo: name, forKey: key, expiration: .never,
                            extendedData: nil)
        }
    }

    /// The folder removeAll moves old data folders to.
    var trashPath: String { store.withLock { $0.trashPath } }

    /// Sets (or clears, with nil) a hook that a read calls, without any lock, once it found
    /// no write for its key in the buffer and is about to query the manifest.
    func setReadWillQueryManifest(_ hook: (@Sendable (String) -> Void)?) {
        reader.buffer.withLock { $0.readWillQueryManifest = hook }
    }

    /// Marks a limit trim as running, as `trimToLimits` does; returns the set count it starts from.
    func markLimitTrimRunning() -> Int {
        store.withLock { storage in
            storage.isLimitTrimScheduled = true
            return storage.buffer.withLock { $0.counters.sets }
        }
    }
}
