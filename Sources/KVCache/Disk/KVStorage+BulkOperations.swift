import Foundation

/// Operations over many rows: removeAll, key enumeration, the orphan sweep, recounting the totals.
extension KVStorage {
    /// Empties the store at any size: the rows go in one statement, and the data
    /// folder is swapped for an empty one. Returns the folder (now in `trash/`)
    /// for the owner to delete in the background.
    func removeAll() throws -> String? {
        let database = try requireDatabase()
        // Pending sets become removals, applied in the same transaction: until it
        // commits, readers find them in the buffer and miss, instead of an older row.
        let obsolete = buffer.withLock { state -> [String] in
            state.accessTimes.removeAll()
            var names: [String] = []
            for (key, write) in state.pending.entries where write.value != nil {
                if let name = state.pending.record(.remove, forKey: key.string) { names.append(name) }
            }
            return names
        }
        for name in obsolete { files.remove(name) }
        // On a full disk `write` releases the reserve and empties the WAL to make room:
        // deleting every row frees their pages and touches only a few.
        let removed = try write(freesSpace: true) { transaction throws -> Int in
            let count = transaction.start.count
            try database.statement(Manifest.deleteAll).run { try $0.execute() }
            try database.statement(Manifest.resetStats).run { try $0.execute() }
            // The stats row is already zero; nothing to add at commit.
            transaction.delta = .zero
            return count
        }
        committedTotals = .zero
        counters.evictions[.removed, default: 0] += removed
        let trash = trashPath + "/" + FileNameHash.hex(UInt64(KVStorage.wallClock() * 1e6))
            + "-" + FileNameHash.hex(.random(in: .min ... .max))
        let moved = rename(dataPath, trash) == 0
        if moved { dataFolderGeneration += 1 }
        try FileStore.createSubfolder(dataPath)
        // If the swap failed the old files are orphans now; the sweep removes them.
        if !moved { needsOrphanSweep = true }
        ensureReserve()
        return moved ? trash : nil
    }

    /// Removes up to `removeAllStepLimit` entries (any order) in one transaction; a
    /// step of removeAll with progress (see `DiskCache.performWork`).
    static let removeSomeWork: DetachedCommit.Work = { transaction in
        try transaction.deleteRows(Manifest.deleteAny, limit: KVStorage.removeAllStepLimit)
    }

    /// Up to `limit` keys greater than `after` (byte-wise order), skipping expired entries.
    func keys(after: String?, limit: Int) throws -> [String] {
        try commit()  // pending writes must take part in the order
        let database = try requireDatabase()
        let now = options.clock()
        let sql = after == nil ? Manifest.selectKeysFromStart : Manifest.selectKeysAfter
        return try database.statement(sql).run { statement in
            var index: Int32 = 1
            if let after {
                try statement.bind(after, at: 1)
                index = 2
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

    /// Deletes the files among `names` that no row references. A file modified
    /// after `cutoff` is kept: another process may be between writing it and
    /// committing its row. Files of this process's pending writes are always kept.
    func removeOrphans(among names: [String], modifiedAfterIsKept cutoff: Double?) throws -> Int {
        let database = try requireDatabase()
        try requireWritable()
        let pending = uncommittedFiles
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

    /// Recounts the stats row from the manifest (a full scan: for tools and repair only).
    func recomputeTotals() throws -> Totals {
        let database = try requireDatabase()
        try write { transaction in
            try database.statement(Manifest.recomputeStats).run { try $0.execute() }
            transaction.delta = .zero
        }
        committedTotals = try readTotals()
        return committedTotals
    }
}
