/// Trims, driven by the indexes on last_access_time and expiration_time: each
/// step removes a bounded number of rows, oldest access first, in one
/// transaction, so the owner can release its lock between steps.
extension KVStorage {
    /// Rows removed per trim step (one transaction).
    static let trimStepLimit = 256

    /// Removes up to `limit` entries toward `goal`; returns how many, 0 when the goal is met.
    func trimStep(_ goal: TrimGoal, reason: EvictionReason, limit: Int = KVStorage.trimStepLimit) throws -> Int {
        // Cheap exits without taking the write lock.
        switch goal {
        case .count(let target): if try totals().count <= target { return 0 }
        case .size(let target): if try totals().size <= target { return 0 }
        case .age, .expired: break
        }
        let now = options.clock()
        // The transaction applies pending writes and buffered access times first,
        // so the LRU order and extended expirations are right.
        let removed = try write { () throws -> Int in
            var victims: [Victim]
            switch goal {
            case .count(let target):
                let excess = currentTotals.count - target
                victims = excess > 0 ? try selectVictims(Manifest.selectOldest, limit: min(excess, limit)) : []
            case .size(let target):
                var excess = currentTotals.size - target
                victims = excess > 0 ? try selectVictims(Manifest.selectOldest, limit: limit) : []
                if let cut = victims.firstIndex(where: { excess -= $0.size; return excess <= 0 }) {
                    victims.removeSubrange((cut + 1)...)
                }
            case .age(let seconds):
                victims = try selectVictims(Manifest.selectAccessedBefore, limit: limit, time: now - seconds)
            case .expired:
                victims = try selectVictims(Manifest.selectExpired, limit: limit, time: now)
            }
            var removed = 0
            for victim in victims where try deleteRow(key: victim.key, filename: victim.filename, size: victim.size) {
                removed += 1
            }
            return removed
        }
        if removed > 0 { counters.evictions[reason, default: 0] += removed }
        return removed
    }

    /// Runs a victim query; `time` (if any) binds to ?1 and the limit follows it.
    func selectVictims(_ sql: String, limit: Int, time: Double? = nil) throws -> [Victim] {
        try requireDatabase().statement(sql).run { statement in
            var index: Int32 = 1
            if let time {
                statement.bind(time, at: 1)
                index = 2
            }
            statement.bind(limit, at: index)
            var victims: [Victim] = []
            victims.reserveCapacity(limit)
            while try statement.step() {
                victims.append(Victim(key: statement.string(at: 0) ?? "", filename: statement.string(at: 1),
                                      size: statement.int64(at: 2)))
            }
            return victims
        }
    }

    /// True when the store holds more than its count or size limit.
    func exceeds(countLimit: Int, sizeLimit: Int64) -> Bool {
        let totals = currentTotals
        return totals.count > countLimit || totals.size > sizeLimit
    }
}
