import CSQLite

/// Giving space back on a full disk. A cache that fills its own disk must still be
/// able to shrink, but every deletion is a commit, and a commit needs room: new WAL
/// frames, and a checkpoint that may grow the database file. So the store keeps a
/// reserve (a file of zeros, `KVStorage.reserveFileName`) in its directory. When a
/// commit that removes entries (a removal, a trim step, removeAll) fails for lack of
/// space, the store deletes the reserve and checkpoints the WAL with TRUNCATE, which
/// empties the WAL file, then commits again. The reserve is made again after a later
/// trim, removeAll or flush, once there is room for it.
extension KVStorage {
    /// Bytes of the reserve: room for a small deletion's commit (its WAL frames: the
    /// leaves and index pages it touches, the stats row, the header), 8 pages of the
    /// manifest, and at least 64 KiB; 128 KiB with the default 16 KiB pages.
    var reserveSize: Int { max(64 * 1024, 8 * (checkpointer?.pageSize ?? options.pageSize)) }

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
