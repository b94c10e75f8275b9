import Synchronization

/// What this process has written or read and the manifest does not show yet: the
/// pending writes, the batch being committed, buffered access times and the
/// counters, under a lock that covers memory work only.
///
/// Readers (see DiskReader) take only this lock and a read connection, never the
/// store's lock, so a get never waits for a commit, a checkpoint, a trim or a scan.
/// Writers hold the store's lock and take this one for each change they make here.
///
/// Why a read stays correct across a commit: a write leaves the buffer only after
/// the commit that holds it has returned, in the same lock hold that settles it, so
/// a reader that finds no write for its key here reads a WAL snapshot that has that
/// commit (a new one, or one its connection kept because nothing was committed since). A failed commit puts its writes back in
/// that same lock hold, so they are never in neither place.
final class WriteBuffer: @unchecked Sendable {
    struct State {
        /// Writes not yet handed to a commit (group commit).
        var pending = PendingWrites()
        /// The writes a transaction on the store's connection is applying.
        var committing: PendingWrites?
        /// The batch being committed on the commit connection.
        var detached: DetachedCommit?
        var accessTimes = AccessTimeBuffer()
        var counters = KVStorage.Counters()
        /// The latest modification or access time recorded (see `KVStorage.stamp(_:)`).
        var latestStamp = -Double.infinity
        /// Totals as of the last commit or stats read (pending writes not included).
        var committedTotals = KVStorage.Totals.zero
        var isAccessFlushScheduled = false
        var isUrgentAccessFlushScheduled = false
        /// A reader queued a removal and asked the commit thread to schedule its commit.
        var isCommitRequested = false
        /// Test hook: called (without any lock) when a read found no write for its key
        /// in the buffer and is about to read the manifest.
        var readWillQueryManifest: (@Sendable (String) -> Void)?

        /// The write this process made last for `key` and has not settled as committed.
        func latestWrite(forKey key: String) -> PendingWrites.Write? {
            if let write = pending[key] { return write }
            if let write = committing?[key] { return write }
            return detached?.writes[key]
        }

        /// A buffered access time for `key`, also from the batch in flight.
        func bufferedAccessTime(forKey key: String) -> Double? {
            accessTimes.time(for: key) ?? detached?.accessTimes[ByteWiseKey(key)]
        }

        /// `key`'s deadline as reads see it: the stored one, moved by a buffered access
        /// when reads extend lifetimes (`extends`); nil if it never expires.
        func deadline(of row: ManifestRow, forKey key: String, extends: Bool) -> Double? {
            // Only a lifetime that reads extend needs the buffered access looked up.
            guard extends, row.deadline != nil, row.lifetime != nil else { return row.deadline }
            return row.deadline(lastAccess: bufferedAccessTime(forKey: key), extends: true)
        }

        /// The clock, but never earlier than a time already recorded (see `KVStorage.stamp(_:)`).
        mutating func stamp(_ now: Double) -> Double {
            if now > latestStamp { latestStamp = now }
            return latestStamp
        }
    }

    // Recursive: a nested `withLock` (a bug: the body already has exclusive access to
    // the state) then stops at Swift's exclusivity check, with a message, not in a deadlock.
    private let mutex = PThreadMutex(recursive: true)
    private var state = State()
    /// Published on each unlock: false when no write is buffered and no read hook is
    /// set. Every reading thread loads it; only writers store it.
    private let holdsWrites = Atomic<Bool>(false)
    /// Bumped when removeAll starts swapping the data folder and again when it is done
    /// (odd while files of uncommitted writes are on their way back): a file read that
    /// overlapped a swap looks again instead of calling the row broken. Atomic, so a
    /// file read loads it without the lock (a plain hit takes no lock at all).
    private let folderSwaps = Atomic<UInt64>(0)

    /// The data-folder swap count (see `folderSwaps`), loaded before a file is read.
    var dataFolderSwaps: UInt64 { folderSwaps.load(ordering: .sequentiallyConsistent) }

    /// Marks the start or the end of a data-folder swap.
    func countFolderSwap() {
        folderSwaps.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    @inline(__always)
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        mutex.lock()
        defer { unlock() }
        return try body(&state)
    }

    @inline(__always)
    private func unlock() {
        let holds = !state.pending.isEmpty || state.committing != nil || state.detached != nil
            || state.readWillQueryManifest != nil
        if holds != holdsWrites.load(ordering: .relaxed) { holdsWrites.store(holds, ordering: .releasing) }
        mutex.unlock()
    }

    /// False only if, as of the last unlock, no write is buffered (without the lock).
    /// A write recorded before this call is seen; one that leaves the buffer does so
    /// after its commit, so a reader that sees false reads a snapshot with it.
    var mayHoldWrites: Bool { holdsWrites.load(ordering: .acquiring) }
}

// The store's reads of the buffer: each takes the buffer's lock for its duration.
extension KVStorage {
    /// The write this process made last for `key` and has not settled as committed.
    func latestWrite(forKey key: String) -> PendingWrites.Write? {
        buffer.withLock { $0.latestWrite(forKey: key) }
    }

    /// A buffered access time for `key`, also from the batch in flight.
    func bufferedAccessTime(forKey key: String) -> Double? {
        buffer.withLock { $0.bufferedAccessTime(forKey: key) }
    }

    /// The time to record as a modification or access: the clock, but never earlier
    /// than a time already recorded. If the wall clock jumps backwards, entries touched
    /// after the jump still count as newer than those touched before it, so LRU trims
    /// keep evicting the least recently used. (Expiration deadlines stay on the wall clock.)
    func stamp(_ now: Double) -> Double {
        buffer.withLock { $0.stamp(now) }
    }
}
