/// Trims, driven by the indexes on last_access_time and expiration_time: each
/// step removes a bounded number of rows, oldest access first, with one DELETE
/// … RETURNING in one transaction (stats updated once, files deleted after the
/// commit), so the owner can release its lock between steps.
extension KVStorage {
    /// A row chosen for removal.
    struct Victim {
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

    /// Rows removed per trim step (one transaction, the lock held throughout): about
    /// 10–15 ms of deleting 1 KB inline rows with 16 KiB pages here, so other callers wait at most that long.
    static let trimStepLimit = 4096
    /// Rows removed per step of `removeAll(progress:)`: finer, since each step reports progress.
    static let removeAllStepLimit = 1024

    /// Removes up to `limit` entries toward `goal`; returns how many, 0 when the goal is met.
    func trimStep(_ goal: TrimGoal, reason: EvictionReason, limit: Int = KVStorage.trimStepLimit) throws -> Int {
        // Cheap exits without taking the write lock. On a full disk the pending sets
        // may not commit (they are dropped and reported): the trim goes on regardless.
        let totals: Totals
        do {
            totals = try self.totals()
        } catch let error as SQLiteError where error.isDiskFull {
            totals = try readTotals()
        }
        switch goal {
        case .count(let target): if totals.count <= target { return 0 }
        case .size(let target): if totals.size <= target { return 0 }
        case .age, .expired: break
        }
        let now = options.clock()
        var limit = limit
        var removed = 0
        while true {
            do {
                removed = try trimStepOnce(goal, limit: limit, now: now)
                break
            } catch let error as SQLiteError where error.isDiskFull && limit > 1 {
                // A full disk: even with the reserve released, this step's commit did not
                // fit. Smaller steps need fewer WAL frames each (the WAL is emptied before each).
                limit = max(1, limit / 8)
            }
        }
        if removed > 0 {
            counters.evictions[reason, default: 0] += removed
            ensureReserve()
        }
        return removed
    }

    private func trimStepOnce(_ goal: TrimGoal, limit: Int, now: Double) throws -> Int {
        // The transaction applies pending writes and buffered access times first,
        // so the LRU order and extended expirations are right.
        try write(freesSpace: true) { transaction throws -> Int in
            switch goal {
            case .count(let target):
                let excess = transaction.current.count - target
                return excess > 0 ? try deleteRows(Manifest.deleteOldest, limit: min(excess, limit), in: &transaction) : 0
            case .size(let target):
                let excess = transaction.current.size - target
                guard excess > 0 else { return 0 }
                return try deleteRows(Manifest.deleteOldest, limit: try oldestCount(coveringSize: excess, limit: limit),
                                      in: &transaction)
            case .age(let seconds):
                // Ages count on the same time line as the recorded access times.
                return try deleteRows(Manifest.deleteAccessedBefore, limit: limit, time: stamp(now) - seconds,
                                      in: &transaction)
            case .expired:
                return try deleteRows(Manifest.deleteExpired, limit: limit, time: now, in: &transaction)
            }
        }
    }

    /// Runs a DELETE … RETURNING filename, size inside `transaction`; `time` (if any)
    /// binds to ?1 and the limit follows it. The removed rows are recorded in the
    /// transaction. Returns the row count.
    func deleteRows(_ sql: String, limit: Int, time: Double? = nil, in transaction: inout Transaction) throws -> Int {
        guard limit > 0 else { return 0 }
        return try requireDatabase().statement(sql).run { statement in
            var index: Int32 = 1
            if let time {
                try statement.bind(time, at: 1)
                index = 2
            }
            try statement.bind(limit, at: index)
            var removed = 0
            while try statement.step() {
                transaction.recordRemoved(size: statement.int64(at: 1), file: statement.string(at: 0))
                removed += 1
            }
            return removed
        }
    }

    /// How many of the oldest rows (at most `limit`) it takes to free `size` bytes.
    private func oldestCount(coveringSize size: Int64, limit: Int) throws -> Int {
        try requireDatabase().statement(Manifest.selectOldestSizes).run { statement in
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

    /// True when the store holds more than its count or size limit.
    func exceeds(countLimit: Int, sizeLimit: Int64) -> Bool {
        let totals = committedTotals
        return totals.count > countLimit || totals.size > sizeLimit
    }
}
