import CSQLite

/// Giving space back on a full disk, whoever filled it. Every deletion is a commit, and a
/// commit needs room: WAL frames for the pages it changes, and a checkpoint that writes
/// them to the database file. Deleting rows never grows that file, so a deletion's
/// checkpoint needs no room, and its frames reuse the WAL's blocks once the WAL has been
/// fully checkpointed (it restarts from its start). What can block it is growth still in
/// the WAL: pages earlier sets added, which the database file has to grow by before the
/// WAL can restart. Once another file takes the disk's last bytes, no room is left for
/// that growth, and no deletion commits (issue 38).
///
/// So three things keep a disk filled by anything shrinkable:
/// - On a nearly full disk every commit is checkpointed at once (`WALCheckpointer`), while
///   its growth still has room, and a commit of sets is refused (`diskFull`, its sets
///   dropped and reported as for a failed commit) when the disk could not take its
///   estimated growth, twice, beside the reserve (`WALCheckpointer.admitGrowth`). So the
///   WAL holds no growth the disk could not take.
/// - A reserve (a file of zeros, `KVStorage.reserveFileName`) is kept in the directory
///   for deletions alone; sets never use it. When a commit that removes entries (a removal,
///   a trim step, removeAll) fails for lack of space, the store deletes the reserve and
///   checkpoints the WAL with TRUNCATE, which empties the WAL file, then commits again; trim
///   steps that still do not fit are retried smaller. The reserve is made again after a
///   later trim, removeAll or flush, or before a commit of sets, once there is room.
/// - After a commit with removals on a nearly full disk, the WAL is emptied, so the room
///   the deletion's frames took goes back to the disk.
///
/// Deleting value files first would free space only for file values, and a rollback journal
/// or a VACUUM needs more room than the deletion, not less; keeping growth out of the WAL
/// works whatever the values and whoever takes the rest of the disk.
extension KVStorage {
    /// Bytes of the reserve: room for a small deletion's commit (its WAL frames: the
    /// leaves and index pages it touches, the stats row, the header), 8 pages of the
    /// manifest, and at least 64 KiB; 128 KiB with the default 16 KiB pages.
    var reserveSize: Int { Self.reserveSize(pageSize: checkpointer?.pageSize ?? options.pageSize) }

    static func reserveSize(pageSize: Int) -> Int { max(64 * 1024, 8 * pageSize) }

    /// Makes the reserve if it is not in place (one syscall when it is not; nothing when it is).
    func ensureReserve() {
        if isReserveInPlace || isClosed { return }
        isReserveInPlace = FileStore.createReserve(reservePath, size: reserveSize)
    }

    /// On a full disk: deletes the reserve, then empties the WAL (a TRUNCATE checkpoint,
    /// which does not wait for other connections: the busy handler is off for it).
    /// Returns true if it gave any space back. Called with no transaction open and no
    /// detached batch in flight.
    func giveSpaceBack() -> Bool {
        let released = FileStore.releaseReserve(reservePath)
        isReserveInPlace = false
        return truncateWAL() || released
    }

    /// After a commit that freed space on a nearly full disk (free space under four
    /// reserves): empties the WAL, whose frames would otherwise hold on to the room
    /// the next writes need (the WAL file keeps its size until it is truncated). The
    /// checkpoint may have to grow the database file, so the reserve goes first; it
    /// is made again from the room the WAL gave back.
    func truncateWALIfDiskIsNearlyFull() {
        guard let free = FileStore.freeSpace(at: directory), free < 4 * Int64(reserveSize) else { return }
        _ = giveSpaceBack()
        ensureReserve()
    }

    /// Measures the disk's free space again for `batchByteLimit`; after each commit.
    func updateBatchByteLimit() {
        batchByteLimit = Self.batchByteLimit(options: options, freeSpace: FileStore.freeSpace(at: directory))
    }

    /// A batch commits at an eighth of the free space at most: its pages go to the WAL, then
    /// to the database file, and both must fit. Pending writes that outgrow the free space
    /// while a slow commit is in flight (a group commit delay of zero under load gathered
    /// about 100 writes of 8 KB on a 2 MB disk) would make a batch the disk cannot take: it is
    /// refused (`WALCheckpointer.admitGrowth`) and its writes are lost. Past this limit the
    /// next write waits for the batch in flight instead, as it does at `groupCommitMaxBytes`.
    static func batchByteLimit(options: Options, freeSpace: Int64?) -> Int {
        guard let freeSpace else { return options.groupCommitMaxBytes }
        return max(1, min(options.groupCommitMaxBytes, Int(clamping: freeSpace / 8)))
    }

    /// A TRUNCATE checkpoint that does not wait for other connections (the busy
    /// handler is off for it); true if it emptied a WAL that held bytes.
    private func truncateWAL() -> Bool {
        guard let database, let handle = database.handle, !database.isInTransaction else { return false }
        // A background checkpoint holds the checkpoint lock: let it finish first.
        checkpointer?.waitForCheckpoint()
        readers.endUnusedSnapshots()
        let walSize = Self.fileSize(atPath: manifestPath + "-wal") ?? 0
        let code = database.withoutBusyWait {
            sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        }
        return code == SQLITE_OK && walSize > 0
    }
}
