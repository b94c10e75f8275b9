/// The disk level's test hooks: points where a test pauses slow work on purpose, to
/// show that other callers go on meanwhile. Each is nil (one lock and a nil check)
/// outside tests. Together with `DiskCache`'s test accessors (DiskCache+Testing.swift),
/// the only way tests reach the level's internals.
final class DiskTestHooks: Sendable {
    typealias Hook = MutexBox<(@Sendable () -> Void)?>

    /// Called under the store's lock before a write transaction on the store's
    /// connection begins (and may wait for another process's write lock).
    let writeWillBegin = Hook(nil)
    /// Called when a flush waits, without the lock, for its commit.
    let flushWillWait = Hook(nil)
    /// Called when `flush(.synced)` starts its checkpoint and fsyncs, without the lock.
    let flushWillSync = Hook(nil)
    /// Called when a call waits, without the lock, for a commit (see `DiskCache.withStoreLock`).
    let commitWillWaitOffLock = Hook(nil)
    /// Called on the commit thread before a batch with work (a trim step, a step of
    /// `removeAll(progress:)`) begins its transaction (and may wait for the write lock).
    let workWillBegin = Hook(nil)
    /// Called on the commit thread once a batch's work has run, before its commit: its
    /// transaction (SQLite's write lock) is held open meanwhile.
    let workWillCommit = Hook(nil)
    /// Called under the store's lock while removeAll swaps the data folder, after the old
    /// one moved to trash/ and before the files of uncommitted writes come back.
    let dataFolderWillReturnFiles = Hook(nil)
    /// Called when `verify` starts its integrity check, without the lock.
    let verifyWillScan = Hook(nil)
}

extension MutexBox where Value == (@Sendable () -> Void)? {
    /// Runs the hook, if one is set (outside the hook's own lock).
    func run() {
        load()?()
    }

    /// Sets a hook that runs `body` the next time only, then unsets itself.
    func setOnce(_ body: @escaping @Sendable () -> Void) {
        withLock {
            $0 = { [unowned self] in
                withLock { $0 = nil }
                body()
            }
        }
    }
}
