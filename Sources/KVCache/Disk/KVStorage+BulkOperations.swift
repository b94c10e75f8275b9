import Foundation

/// Operations over many rows: removeAll, key enumeration, the orphan sweep, recounting the totals.
extension KVStorage {
    /// Prepares emptying the store at any size (see `DiskCache.performWork` with
    /// `emptiesDataFolder`): under the lock, pending sets become removals; the work then
    /// deletes every row in one statement on the commit connection, and settling its
    /// batch swaps the data folder for an empty one (`swapDataFolder`).
    func removeAllWork() throws -> DetachedCommit.Work {
        _ = try requireDatabase()
        try requireWritable()
        // The batch in flight first: the sets turned into removals below must be all
        // the pending writes the work's batch takes (declared `.idleWriter`).
        settleBatchInFlight()
        // Pending sets become removals, applied in the same transaction: until it
        // commits, readers find them in the buffer and miss, instead of an older row.
        let obsolete = buffer.withLock { $0.turnPendingSetsIntoRemovals() }
        for name in obsolete { files.remove(name) }
        return { transaction in
            let count = transaction.start.count
            if transaction.recordsEvictions {
                // For onEviction: the keys as they go (a scan the fast path skips).
                try transaction.database.statement(Manifest.deleteAllReturningKeys).run { statement in
                    while try statement.step() {
                        if let key = statement.string(at: 0) { transaction.changes.evictions.append(Eviction(key: key, reason: .removed)) }
                    }
                }
            }
            try transaction.database.statement(Manifest.deleteAll).run { try $0.execute() }
            try transaction.database.statement(Manifest.resetStats).run { try $0.execute() }
            // The stats row is zero now, whatever it held: nothing to add at commit.
            transaction.start = .zero
            transaction.changes.delta = .zero
            return count
        }
    }

    /// After the commit that deleted every row (removeAll), under the lock and before
    /// any later batch commits: swaps the data folder for an empty one, and brings the
    /// files of writes not committed yet (pending, reserved, being written) back into
    /// it. The old folder waits in `trashFolders` for the owner to delete in the background.
    func swapDataFolder() {
        buffer.countFolderSwap()
        defer { buffer.countFolderSwap() }
        let trashed = trashPath + "/" + FileNameHash.hex(UInt64(KVStorage.wallClock() * 1e6))
            + "-" + FileNameHash.hex(.random(in: .min ... .max))
        // Named, and locked before it moves, so that a trash cleanup (at open, in this process
        // or another) leaves it alone until the files below are back. A crash frees the lock.
        let folder = trashed + Self.returningSuffix
        let lock = FileStore.lockFolder(dataPath)
        defer { if let lock { Glibc.close(lock) } }
        guard rename(dataPath, folder) == 0 else {
            // The old files stay, orphans now that their rows are gone: the sweep removes them.
            needsOrphanSweep = true
            return
        }
        guard (try? FileStore.createSubfolder(dataPath)) != nil else {
            _ = rename(folder, dataPath)
            needsOrphanSweep = true
            return
        }
        hooks.dataFolderWillReturnFiles.run()
        // A file whose writer has not created it yet is created in the new folder.
        for name in uncommittedFiles() { _ = rename(folder + "/" + name, dataPath + "/" + name) }
        trashFolders.append(rename(folder, trashed) == 0 ? trashed : folder)
    }

    /// The suffix of a trash folder whose uncommitted files are still being brought back
    /// (while its swap holds `FileStore.lockFolder` on it).
    static let returningSuffix = ".returning"

    /// Accounts for a removeAll that removed `removed` entries; returns the swapped-out
    /// data folders to delete.
    func removedAll(_ removed: Int) -> [String] {
        countEvictions(removed, reason: .removed)
        ensureReserve()
        defer { trashFolders = [] }
        return trashFolders
    }

    /// Removes up to `removeAllStepLimit` entries (any order) in one transaction; a
    /// step of removeAll with progress (see `DiskCache.performWork`).
    static let removeSomeWork: DetachedCommit.Work = { transaction in
        try transaction.deleteRows(Manifest.deleteAny, limit: KVStorage.removeAllStepLimit, reason: .removed)
    }

    /// The work of one step of removing the entries whose keys start with `prefix` (see
    /// `DiskCache.performWork`): deletes up to `limit` rows of that key range, after the
    /// batch's pending writes (so the sets made before the call are among them), and
    /// returns how many.
    static func removeValuesWork(withPrefix prefix: String, limit: Int) -> DetachedCommit.Work {
        let upper = Self.upperBound(ofKeysWithPrefix: prefix)
        return { transaction in
            let database = transaction.database
            return try database.statement(Manifest.deleteKeyRange(bounded: upper != nil)).run { statement in
                try statement.bind(prefix, at: 1)
                try statement.bind(upper, at: 2)
                try statement.bind(limit, at: 3)
                var removed = 0
                while try statement.step() {
                    transaction.recordRemoved(size: statement.int64(at: 1), file: statement.string(at: 0),
                                              key: statement.string(at: 2), reason: .removed)
                    removed += 1
                }
                return removed
            }
        }
    }

    /// Up to `limit` keys that start with `prefix` and are greater than `after`
    /// (byte-wise order), skipping expired entries: one range of the primary key.
    func keys(withPrefix prefix: String, after: String?, limit: Int) throws -> [String] {
        try commit()  // pending writes must take part in the order
        let database = try requireDatabase()
        let now = options.clock()
        // The range starts after `after`, or at the prefix if `after` sorts before it.
        let (lower, inclusive): (String, Bool) = if let after, !after.utf8.lexicographicallyPrecedes(prefix.utf8) {
            (after, false)
        } else {
            (prefix, true)
        }
        let upper = Self.upperBound(ofKeysWithPrefix: prefix)
        let sql = Manifest.selectKeys(inclusive: inclusive, bounded: upper != nil)
        return try database.statement(sql).run { statement in
            try statement.bind(lower, at: 1)
            var index: Int32 = 2
            if let upper {
                try statement.bind(upper, at: index)
                index += 1
            }
            try statement.bind(now, at: index)
            try statement.bind(max(0, limit), at: index + 1)
            var keys: [String] = []
            while try statement.step() {
                if let key = statement.string(at: 0) { keys.append(key) }
            }
            return keys
        }
    }

    /// The least string greater than every string that starts with `prefix` (byte-wise
    /// UTF-8 order, which is code point order): its last scalar that can grow, grown by
    /// one (skipping the surrogate range), the scalars after it dropped. Nil for the
    /// empty prefix, or one of U+10FFFF only: no upper bound.
    static func upperBound(ofKeysWithPrefix prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var next = last.value + 1
            if next == 0xD800 { next = 0xE000 }
            if let scalar = Unicode.Scalar(next) {
                scalars.append(scalar)
                var result = String.UnicodeScalarView()
                result.append(contentsOf: scalars)
                return String(result)
            }
        }
        return nil
    }

    /// Deletes the files among `names` that no row references. A file modified
    /// after `cutoff` is kept: another process may be between writing it and
    /// committing its row. Files of this process's pending writes are always kept.
    func removeOrphans(among names: [String], modifiedAfterIsKept cutoff: Double?) throws -> Int {
        let database = try requireDatabase()
        try requireWritable()
        let pending = uncommittedFiles()
        let statement = try database.statement(Manifest.fileIsReferenced)
        var removed = 0
        for name in names where !pending.contains(name) {
            let referenced = try statement.run { statement in
                try statement.bind(name, at: 1)
                return try statement.step()
            }
            if referenced { continue }
            if let cutoff, let modified = files.modificationTime(name), modified > cutoff { continue }
            files.remove(name)
            removed += 1
        }
        return removed
    }

    /// Recounts the stats row from the manifest (a full scan: for tools and repair
    /// only; see `DiskCache.performWork`).
    static let recountWork: DetachedCommit.Work = { transaction in
        try transaction.database.statement(Manifest.recomputeStats).run { try $0.execute() }
        // The stats row holds the recount now: the commit leaves it as it is.
        transaction.start = try Totals.select(with: transaction.database.statement(Manifest.selectStats))
        transaction.changes.delta = .zero
        return transaction.start.count
    }
}
