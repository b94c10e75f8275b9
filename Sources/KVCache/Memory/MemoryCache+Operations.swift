// The steps behind the public operations. Unless noted, they run with the lock held.
extension MemoryCache {
    /// Which limits an insertion left exceeded after its first burst of evictions.
    @usableFromInline
    struct Purge {
        @usableFromInline var count = false
        @usableFromInline var cost = false

        @inlinable
        init() {}

        @inlinable
        var isNeeded: Bool { count || cost }
    }

    /// Most evictions done in one hold of the lock; a longer purge lets other
    /// threads in between bursts.
    @inlinable
    static var burstSize: Int { 256 }

    /// The deadline and the extendable lifetime of a new entry. Called before locking.
    @usableFromInline
    func timing(of expiration: Expiration) -> (deadline: Double, lifetime: Double) {
        switch expiration {
        case .never:
            return (.infinity, 0)
        case .after:
            let deadline = expiration.deadline(from: clock.wallLowerBound()) ?? .infinity
            return (deadline, expiration.extendableLifetime ?? 0)
        case .at:
            return (expiration.deadline(from: 0) ?? .infinity, 0)
        }
    }

    /// Stores an entry and evicts a first burst toward the limits. `hash` is the key's
    /// unseeded policy hash (0 under `.lru`), `tableHash` its table hash.
    @inlinable
    func insert(
        _ value: Value, forKey key: Key, hash: UInt32, tableHash: Int, cost: Int64, deadline: Double, lifetime: Double,
        into removals: inout Removals
    ) -> Purge {
        replayPendingReads()
        let accessTime = limits.tracksAge ? clock.monotonicNow() : 0
        counters.sets &+= 1
        let (index, old) = storage.setValue(
            value, forKey: key, hash: hash, tableHash: tableHash, cost: cost, accessTime: accessTime, deadline: deadline,
            lifetime: lifetime)
        if let old {
            discard(key, old.value, cost: old.cost, reason: .replaced, into: &removals)
        }
        // Whether this insertion crossed a limit, which starts a purge to the low
        // watermarks, even if the adaptive policy's admission evicts to fit first.
        let crossedCount = storage.count > limits.count
        let crossedCost = storage.totalCost.exceeds(limits.cost)
        if isAdaptive {
            admitAdaptively(at: index, hash: hash, replaced: old != nil, into: &removals)
        }
        var purge = Purge()
        if crossedCount || crossedCost {
            purge = evictTowardTargets(count: crossedCount, cost: crossedCost, into: &removals)
        }
        takeFullReleaseBatch(into: &removals)
        return purge
    }

    /// Evicts the policy's victims toward the low watermarks of the limits the
    /// insertion crossed, at most one burst; reports which are not done.
    @inlinable
    func evictTowardTargets(count: Bool, cost: Bool, into removals: inout Removals) -> Purge {
        var budget = Self.burstSize
        var purge = Purge()
        if count {
            while storage.count > limits.countTarget {
                guard budget > 0 else { purge.count = true; break }
                evictNext(reason: .count, into: &removals)
                budget -= 1
            }
        }
        if cost || storage.totalCost.exceeds(limits.cost) {
            while storage.totalCost.exceeds(limits.costTarget) {
                guard budget > 0 else { purge.cost = true; break }
                evictNext(reason: .cost, into: &removals)
                budget -= 1
            }
        }
        return purge
    }

    /// Finishes a purge that one burst did not complete. Called without the lock.
    @usableFromInline
    func continuePurge(_ purge: Purge) {
        if purge.count {
            evictInBursts(reason: .count, waitsForLock: true) { storage.count > limits.countTarget }
        }
        if purge.cost {
            evictInBursts(reason: .cost, waitsForLock: true) { storage.totalCost.exceeds(limits.costTarget) }
        }
    }

    /// Whether an entry has outlived its deadline or the age limit.
    @inlinable
    func isExpired(at index: Int32) -> Bool {
        let times = storage.times(at: index)
        if times.deadline != .infinity, clock.wallUpperBound() >= times.deadline {
            return true
        }
        if limits.tracksAge, limits.age != .infinity {
            let age = clock.monotonicNow() + clock.monotonicSlack() - times.accessTime
            return age > limits.age
        }
        return false
    }

    /// `value(forKey:)` when entries can expire: expires the entry or records
    /// the read. `hash` is the key's unseeded policy hash (unused under `.lru`),
    /// `tableHash` its table hash. Unlocks.
    @inlinable
    func timedValue(forKey key: Key, hash: UInt32, tableHash: Int) -> Value? {
        // Holds no copy of the value until the entry is known to be live, so an
        // expired value's last reference stays with the background releaser.
        // Writers in place are off while reads take the cache's lock: every writer of
        // the table holds it, so the node stays valid while this thread does.
        let stripe = storage.stripe(forHash: hash)
        guard let node = stripe.node(forKey: key, hash: tableHash) else {
            counters.misses &+= 1
            mutex.unlock()
            return nil
        }
        let index = node.pointee.entry.index
        let times = storage.times(at: index)
        let now = limits.tracksAge ? clock.monotonicNow() : 0
        var expired = false
        if times.deadline != .infinity {
            expired = clock.wallUpperBound() >= times.deadline
        }
        if !expired, limits.tracksAge, limits.age != .infinity {
            expired = now + clock.monotonicSlack() - times.accessTime > limits.age
        }
        if expired {
            var removals = Removals()
            expire(at: index, into: &removals)
            counters.misses &+= 1
            takeFullReleaseBatch(into: &removals)
            unlockAfterChange()
            complete(consume removals)
            return nil
        }
        if limits.tracksAge {
            storage.mutableTimes(at: index).pointee.accessTime = now
        }
        if extendsExpirationOnAccess, times.lifetime > 0 {
            storage.mutableTimes(at: index).pointee.deadline = clock.wallLowerBound() + times.lifetime
        }
        if isAdaptive {
            recordAdaptiveHit(at: index, hash: adaptive.hash.seeded(hash))
        } else {
            storage.moveToFront(index)
        }
        counters.hits &+= 1
        let value = node.pointee.entry.value
        unlockAfterChange()
        return value
    }

    /// Removes an expired entry.
    @inlinable
    func expire(at index: Int32, into removals: inout Removals) {
        let entry = storage.remove(at: index)
        discard(entry.key, entry.value, cost: entry.cost, reason: .expired, into: &removals)
    }

    /// Removes the entry for `key`; returns its value if asked to and it was live.
    /// Takes the lock.
    @usableFromInline
    @discardableResult
    func remove(_ key: Key, returningValue: Bool) -> Value? {
        var removals = Removals()
        mutex.lock()
        let value = removeLocked(key, returningValue: returningValue, into: &removals)
        takeFullReleaseBatch(into: &removals)
        unlockAfterChange()
        complete(consume removals)
        return value
    }

    func removeLocked(_ key: Key, returningValue: Bool, into removals: inout Removals) -> Value? {
        replayPendingReads()
        guard let index = storage.entry(forKey: key)?.index else { return nil }
        if isExpired(at: index) {
            expire(at: index, into: &removals)
            return nil
        }
        let entry = storage.remove(at: index)
        discard(entry.key, entry.value, cost: entry.cost, reason: .removed, into: &removals)
        return returningValue ? entry.value : nil
    }
}
