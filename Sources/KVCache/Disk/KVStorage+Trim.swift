/// Trims, driven by the indexes on last_access_time and expiration_time: each
/// step removes a bounded number of rows, oldest access first, with one DELETE
/// … RETURNING in one transaction (stats updated once, files deleted after the
/// commit). The steps run on the commit connection, without the owner's lock
/// (`DiskCache.performWork`).
extension KVStorage {
    /// A row chosen for removal.
    struct Victim: Sendable {
        var key: String
        var filename: String?
        var size: Int64
    }

    /// What a trim step aims for.
    enum TrimGoal {
        case count(Int)
        case size(Int64)
        /// Not accessed for this many seconds.
        case age(Double)
        case expired
    }

    /// Rows removed per trim step (one transaction, on the commit connection): about
    /// 10–15 ms of deleting 1 KB inline rows with 16 KiB pages here.
    static let trimStepLimit = 4096
    /// Rows removed per step of `removeAll(progress:)`: finer, since each step reports progress.
    static let removeAllStepLimit = 1024

    /// The work of one trim step toward `goal`, removing up to `limit` entries (see
    /// `DiskCache.performWork`); nil when the goal is met already.
    func trimWork(_ goal: TrimGoal, limit: Int, reason: EvictionReason) throws -> DetachedCommit.Work? {
        // Cheap exits without taking the write lock. On a full disk the pending sets
        // may not commit (they are dropped and reported): the trim goes on regardless.
        let totals: Totals
        do {
            totals = try self.totals()
        } catch let error as SQLiteError where error.isDiskFull {
            totals = try readTotals()
        }
        switch goal {
        case .count(let target): if totals.count <= target { return nil }
        case .size(let target): if totals.size <= target { return nil }
        case .age, .expired: break
        }
        // Ages count on the same time line as the recorded access times.
        let now = options.clock()
        let accessedBefore = stamp(now)
        // Entries a cache's fail-safe may still serve stay until its window has passed too.
        let expiredBefore = now - options.expiredRetention
        return { transaction in
            switch goal {
            case .count(let target):
                let excess = transaction.current.count - target
                return excess > 0
                    ? try transaction.deleteRows(Manifest.deleteOldest, limit: min(excess, limit), reason: reason) : 0
            case .size(let target):
                let excess = transaction.current.size - target
                guard excess > 0 else { return 0 }
                return try transaction.deleteRows(
                    Manifest.deleteOldest, limit: try transaction.oldestCount(coveringSize: excess, limit: limit),
                    reason: reason)
            case .age(let seconds):
                return try transaction.deleteRows(Manifest.deleteAccessedBefore, limit: limit,
                                                  time: accessedBefore - seconds, reason: reason)
            case .expired:
                return try transaction.deleteRows(Manifest.deleteExpired, limit: limit, time: expiredBefore,
                                                  reason: reason)
            }
        }
    }

    /// Accounts for a trim step that removed `removed` entries.
    func trimmed(_ removed: Int, reason: EvictionReason) {
        guard removed > 0 else { return }
        countEvictions(removed, reason: reason)
        ensureReserve()
    }
}

extension KVStorage.Transaction {
    /// Runs a DELETE … RETURNING filename, size, key; `time` (if any) binds to ?1 and the
    /// limit follows it. Records the removed rows; returns their count.
    mutating func deleteRows(_ sql: String, limit: Int, time: Double? = nil, reason: EvictionReason) throws -> Int {
        guard limit > 0 else { return 0 }
        var transaction = self
        defer { self = transaction }
        return try database.statement(sql).run { statement in
            var index: Int32 = 1
            if let time {
                try statement.bind(time, at: 1)
                index = 2
            }
            try statement.bind(limit, at: index)
            var removed = 0
            while try statement.step() {
                transaction.recordRemoved(size: statement.int64(at: 1), file: statement.string(at: 0),
                                          key: statement.string(at: 2), reason: reason)
                removed += 1
            }
            return removed
        }
    }

    /// How many of the oldest rows (at most `limit`) it takes to free `size` bytes.
    func oldestCount(coveringSize size: Int64, limit: Int) throws -> Int {
        try database.statement(Manifest.selectOldestSizes).run { statement in
            try statement.bind(limit, at: 1)
            var count = 0
            var freed: Int64 = 0
            while freed < size, try statement.step() {
                freed += statement.int64(at: 0)
                count += 1
            }
            return count
        }
    }
}
