import CSQLite
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checkpoints the manifest's WAL on a background queue, through a connection of
/// its own, so copying WAL pages into the database and its two fsyncs never run
/// inside a commit, under the cache's lock, while callers wait.
///
/// The store's connection calls `walDidGrow` after each commit (SQLite's WAL hook,
/// which replaces its auto-checkpoint). From a soft limit of frames a background
/// checkpoint is requested; from the hard limit (twice as many) the committing
/// connection completes the checkpoint itself, so the WAL stays bounded even when
/// the background falls behind. The background does most of the copying and both
/// fsyncs' worth of waiting; the commit at the hard limit copies what is left.
///
/// The soft limit is the configured one (4 MiB), or a quarter of the disk's free
/// space when that is less: on a small disk filled by the cache, a WAL that grew
/// into the last free bytes was what left no room for the commits that shrink it.
final class WALCheckpointer: Sendable {
    let path: String
    /// The soft limit on a disk with room (the configured WAL size), in frames.
    let softLimit: Int32
    let pageSize: Int
    private let queue = DispatchQueue(label: "KVCache.DiskCache.checkpoint", qos: .utility)
    private let state = MutexBox(State())
    /// Its own connection, used on `queue` only (nil if it could not be opened:
    /// then only the inline checkpoints at `hardLimit` run).
    private let connection: ConnectionBox

    private struct State {
        var isScheduled = false
        var isClosed = false
        var completed = 0
    }

    /// Background checkpoints run so far.
    var completedCheckpoints: Int { state.withLock { $0.completed } }

    /// `limitBytes` of WAL requests a checkpoint; twice as much checkpoints inline.
    ///
    /// The connection is opened now, with the store's, and reads once so that it
    /// holds the WAL file open from the start: every connection of the store then
    /// uses the same WAL file, even if someone deletes its path while open (a
    /// connection opened later would create a second WAL beside the shared index).
    /// Called before each checkpoint: ends the read connections' unused snapshots,
    /// which would stop it short of the WAL's end.
    private let willCheckpoint: @Sendable () -> Void

    init(path: String, limitBytes: Int, pageSize: Int, willCheckpoint: @escaping @Sendable () -> Void = {}) {
        self.path = path
        self.willCheckpoint = willCheckpoint
        self.pageSize = max(512, pageSize)
        softLimit = Int32(clamping: max(1, limitBytes / self.pageSize))
        var database = try? Database(path: path, busyTimeout: 0, create: false)
        if (try? database?.integer("SELECT count FROM stats")) == nil {
            database?.close()
            database = nil
        }
        connection = ConnectionBox(database)
    }

    /// Makes `database` (the store's connection) report its WAL growth here; the
    /// connection keeps this object alive (`hookContext`).
    func install(on database: Database) {
        database.hookContext = self
        sqlite3_wal_hook(database.handle, { context, connection, _, frames in
            let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context!).takeUnretainedValue()
            checkpointer.walDidGrow(frames: frames, connection: connection)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The soft limit now: the configured one, but never more than a quarter of the
    /// disk's free space, so on a nearly full disk the WAL is checkpointed (and reused
    /// from its start) before it takes the room its next commits need.
    func currentSoftLimit() -> Int32 {
        guard let free = FileStore.freeSpace(at: path) else { return softLimit }
        return min(softLimit, max(1, Int32(clamping: free / 4 / Int64(pageSize))))
    }

    /// Frames below which the WAL hook does nothing (not even a stat): a commit or two.
    static let framesBeforeLimitCheck: Int32 = 8

    private func walDidGrow(frames: Int32, connection: OpaquePointer?) {
        guard frames >= Self.framesBeforeLimitCheck else { return }
        let softLimit = currentSoftLimit()
        // Below every limit a disk could impose: nothing to do.
        if frames < softLimit { return }
        let hardLimit = softLimit.multipliedReportingOverflow(by: 2).overflow ? .max : softLimit * 2
        if frames >= hardLimit {
            willCheckpoint()
            // A background checkpoint holds the checkpoint lock (BUSY): wait for it, then
            // copy what it left. With a steady writer it never reaches the WAL's end
            // (frames keep arriving), so this complete checkpoint is what lets the next
            // commit restart the WAL from its start.
            if sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) == SQLITE_BUSY {
                waitForCheckpoint()
                sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            }
        } else if frames >= softLimit {
            requestCheckpoint()
        }
    }

    /// Schedules one background checkpoint, unless one is pending or this is closed.
    private func requestCheckpoint() {
        let schedule = state.withLock { state -> Bool in
            guard !state.isScheduled, !state.isClosed else { return false }
            state.isScheduled = true
            return true
        }
        if schedule { queue.async { self.checkpoint() } }
    }

    private func checkpoint() {
        defer { state.withLock { $0.isScheduled = false } }
        guard !state.withLock({ $0.isClosed }), let database = connection.database else { return }
        passiveCheckpoint(database)
        state.withLock { $0.completed += 1 }
    }

    /// PASSIVE: takes no lock that writers or readers wait for; busy is fine.
    private func passiveCheckpoint(_ database: Database) {
        willCheckpoint()
        try? database.execute("PRAGMA wal_checkpoint(PASSIVE)")
    }

    /// Runs a PASSIVE checkpoint now on the checkpoint connection (for `flush(.synced)`,
    /// without the store's lock); false without a connection or once closed.
    func checkpointNow() -> Bool {
        withConnection { passiveCheckpoint($0) } != nil
    }

    /// Stops scheduling checkpoints and waits for a running one to finish.
    func close() {
        state.withLock { $0.isClosed = true }
        queue.sync {
            connection.database?.close()
            connection.database = nil
        }
    }

    /// Runs `body` on the checkpoint connection, on its queue: for whole-store reads
    /// (verify's scans) that must not run under the store's lock. Nil without a
    /// connection, or once closed.
    func withConnection<Result>(_ body: (Database) throws -> Result) rethrows -> Result? {
        try queue.sync {
            guard !state.withLock({ $0.isClosed }), let database = connection.database else { return nil }
            return try body(database)
        }
    }

    /// Waits for the checkpoint scheduled so far, if any.
    func waitForCheckpoint() {
        queue.sync {}
    }
}

/// A connection handed to one queue, which alone uses it.
private final class ConnectionBox: @unchecked Sendable {
    var database: Database?
    init(_ database: Database?) { self.database = database }
}
