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
    /// The store's reserve (see KVStorage+Space.swift), or nil.
    let reservePath: String?
    private let queue = DispatchQueue(label: "KVCache.DiskCache.checkpoint", qos: .utility)
    private let state = MutexBox(State())
    /// Its own connection, used on `queue` only (nil if it could not be opened:
    /// then only the inline checkpoints at `hardLimit` run).
    private let connection: ConnectionBox

    private struct State {
        var isScheduled = false
        var isClosed = false
        var completed = 0
        /// WAL frames the last inline checkpoint left unwritten (Int32.max when it failed).
        var unwrittenFrames = 0
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

    init(path: String, limitBytes: Int, pageSize: Int, reservePath: String? = nil,
         willCheckpoint: @escaping @Sendable () -> Void = {}) {
        self.path = path
        self.reservePath = reservePath
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

    /// Frames below which the WAL hook checks only whether the disk is nearly full (one
    /// `statvfs`): a commit or two.
    static let framesBeforeLimitCheck: Int32 = 8

    /// Free bytes under which the disk counts as nearly full: 32 pages (512 KiB with 16 KiB pages).
    var nearlyFullBytes: Int64 { 32 * Int64(pageSize) }

    private func walDidGrow(frames: Int32, connection: OpaquePointer?) {
        // On a nearly full disk every commit is checkpointed at once (see `checkpointInline`).
        if frames < Self.framesBeforeLimitCheck {
            if let free = FileStore.freeSpace(at: path), free < nearlyFullBytes { checkpointInline(connection) }
            return
        }
        let softLimit = currentSoftLimit()
        // Below every limit a disk could impose: nothing to do.
        if frames < softLimit { return }
        let hardLimit = softLimit.multipliedReportingOverflow(by: 2).overflow ? .max : softLimit * 2
        if frames >= hardLimit || Int64(softLimit) * Int64(pageSize) < nearlyFullBytes {
            checkpointInline(connection)
        } else if frames >= softLimit {
            requestCheckpoint()
        }
    }

    /// Completes a checkpoint on the committing connection. At the hard limit: a background
    /// checkpoint holds the checkpoint lock (BUSY), so wait for it, then copy what it left;
    /// with a steady writer it never reaches the WAL's end (frames keep arriving), so this
    /// complete checkpoint is what lets the next commit restart the WAL from its start.
    ///
    /// On a nearly full disk, after every commit: a commit that adds pages to the manifest
    /// puts them in the WAL, and only a checkpoint writes them into the database file, which
    /// grows then. Checkpointed at once, while the disk still has the room, a commit's growth
    /// never waits in the WAL; left there, it piled up (600 KB to 1 MB on a 2 MB disk) and once
    /// another file took the last bytes no checkpoint could finish, the WAL could not restart,
    /// and a deletion had no room for its own frames (issue 38). With `admitGrowth`, what
    /// waits is at most an estimate's error, which the reserve covers (KVStorage+Space.swift).
    private func checkpointInline(_ connection: OpaquePointer?) {
        willCheckpoint()
        var log: Int32 = -1, written: Int32 = -1
        var code = sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &written)
        if code == SQLITE_BUSY {
            waitForCheckpoint()
            code = sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &written)
        }
        // What is still to write (a reader's snapshot can stop a checkpoint short, a full
        // disk fails it): `admitGrowth` counts it as growth to come.
        let unwritten = code == SQLITE_OK && log >= 0 && written >= 0 ? Int(log - written) : Int(Int32.max)
        state.withLock { $0.unwrittenFrames = unwritten }
    }

    /// Throws `SQLITE_FULL` for a commit of `writes` on a nearly full disk whose growth of
    /// the database file the disk could not take: a commit puts its new pages in the WAL,
    /// often in blocks the WAL already holds, and only a checkpoint writes them to the
    /// database file, which must grow then. A commit let through without that room left
    /// pages in the WAL that no checkpoint could write; a WAL that cannot be checkpointed
    /// cannot restart, and the next deletion found no room for its own frames (issue 38).
    ///
    /// The growth is estimated from the rows' bytes (in pages, plus two for the indexes),
    /// less the manifest's free pages (left by deletions), plus the frames the last
    /// checkpoint left unwritten, and must fit twice in the free space beside the reserve
    /// (the WAL may need as much again); the reserve stays for deletions, and covers an
    /// estimate short by up to its size. Called on `database` before a commit with sets.
    func admitGrowth(of writes: PendingWrites, on database: Database) throws {
        // Nearly full, or about to be once the WAL's frames and this commit's pages are written
        // to the database file. The commit's own growth counts: a batch that gathered many sets
        // (a slow committer, a long group commit delay) can take a disk with room past full in
        // one commit, leaving growth in the WAL that no checkpoint can write.
        let neededPages = (writes.bytes + 128 * writes.count + pageSize - 1) / pageSize + 2
        let walSize = KVStorage.fileSize(atPath: path + "-wal") ?? 0
        let batchBytes = Int64(neededPages) * Int64(pageSize)
        guard let reservePath, let free = FileStore.freeSpace(at: path),
              free < nearlyFullBytes + 2 * walSize + 2 * batchBytes
        else { return }
        let freePages = Int((try? database.integer("PRAGMA freelist_count")) ?? 0)
        // Outside a transaction, a checkpoint first: it writes what it can and says what is left.
        if !database.isInTransaction { checkpointInline(database.handle) }
        let unwritten = state.withLock { $0.unwrittenFrames }
        let growth = Int64(max(0, neededPages - freePages)) * Int64(pageSize) + Int64(unwritten) * Int64(pageSize)
        if growth == 0 { return }
        // The reserve stays for deletions: the growth must fit in the free space beside it.
        let reserveSize = KVStorage.reserveSize(pageSize: pageSize)
        let inPlace = (KVStorage.fileSize(atPath: reservePath) ?? 0) >= Int64(reserveSize)
            || FileStore.createReserve(reservePath, size: reserveSize)
        if inPlace, 2 * growth <= (FileStore.freeSpace(at: path) ?? 0) { return }
        throw SQLiteError(extendedCode: SQLITE_FULL,
                          message: "database or disk is full (the manifest could not grow by this commit's pages)",
                          sql: nil)
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
