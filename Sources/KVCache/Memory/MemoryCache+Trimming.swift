#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension MemoryCache: MemoryPressureTrimmable {
    /// The most entries the cache holds (see ``setCountLimit(_:)``).
    public var countLimit: Int { withLock { limits.count } }

    /// The most total cost the cache holds (see ``setCostLimit(_:)``).
    public var costLimit: Int64 { withLock { limits.cost } }

    /// How long an entry may go unread before it expires; nil for no limit
    /// (see ``setAgeLimit(_:)``).
    public var ageLimit: Duration? {
        withLock { limits.age.isFinite ? .clamping(seconds: limits.age) : nil }
    }

    /// Changes the most entries the cache holds; lowering it trims at once. Under the
    /// adaptive policy the window's share starts over from its first value.
    ///
    /// - Throws: `KVCacheError.invalidArgument` for a negative limit (nothing changes).
    public func setCountLimit(_ limit: Int) throws {
        try Validation.check(limit >= 0, "countLimit must not be negative, not \(limit)")
        withLock {
            limits.setCount(limit)
            storage.setReleaseBatches(
                countLimit: limits.count, costBatch: limits.releaseBatchCost, inBatches: releasesValuesInBackground)
            storage.slotTarget = LRUStorage<Key, Value>.slotTarget(countLimit: limit)
            if isAdaptive {
                adaptive.setLimits(count: limits.count, cost: limits.cost)
                policyCountsUses = adaptive.isBounded
            }
        }
        trimToLimits()
    }

    /// Changes the most total cost the cache holds; lowering it trims at once. Under the
    /// adaptive policy the window's share starts over from its first value.
    ///
    /// - Throws: `KVCacheError.invalidArgument` for a negative limit (nothing changes).
    public func setCostLimit(_ limit: Int64) throws {
        try Validation.check(limit >= 0, "costLimit must not be negative, not \(limit)")
        withLock {
            limits.setCost(limit)
            storage.setReleaseBatches(
                countLimit: limits.count, costBatch: limits.releaseBatchCost, inBatches: releasesValuesInBackground)
            if isAdaptive {
                adaptive.setLimits(count: limits.count, cost: limits.cost)
                policyCountsUses = adaptive.isBounded
            }
        }
        trimToLimits()
    }

    /// Changes how long an entry may go unread before it expires (nil: no limit);
    /// lowering it trims at once.
    ///
    /// Reads record the time only once an age limit has been set (reading a
    /// clock costs), so an age limit set on a filled cache counts from that
    /// moment for entries not read since.
    ///
    /// - Throws: `KVCacheError.invalidArgument` for a negative duration (nothing changes).
    public func setAgeLimit(_ limit: Duration?) throws {
        try Validation.check(limit.map { $0 >= .zero } ?? true, "ageLimit must not be negative, not \(limit!)")
        let age = limit?.seconds ?? .infinity
        withLock {
            limits.age = age
            if age.isFinite { startTrackingAge() }
        }
        if age.isFinite { trimToAge(age, waitsForLock: true) }
    }

    /// Evicts entries, in the policy's order, until at most `count` remain.
    ///
    /// - Throws: `KVCacheError.invalidArgument` for a negative count (nothing is evicted).
    public func trim(toCount count: Int) throws {
        try Validation.check(count >= 0, "trim(toCount:) needs a count of at least 0, not \(count)")
        evictInBursts(reason: .count, waitsForLock: true) { storage.count > count }
    }

    /// Evicts entries, in the policy's order, until their total cost is at most `cost`.
    ///
    /// - Throws: `KVCacheError.invalidArgument` for a negative cost (nothing is evicted).
    public func trim(toCost cost: Int64) throws {
        try Validation.check(cost >= 0, "trim(toCost:) needs a cost of at least 0, not \(cost)")
        evictInBursts(reason: .cost, waitsForLock: true) { storage.totalCost.exceeds(cost) }
    }

    /// Removes entries not read for longer than `age`, as expired.
    ///
    /// The first call on a cache without an age limit starts recording reads
    /// (see ``setAgeLimit(_:)``) and finds every entry fresh.
    ///
    /// - Throws: `KVCacheError.invalidArgument` for a negative age (nothing is removed).
    public func trim(toAge age: Duration) throws {
        try Validation.check(age >= .zero, "trim(toAge:) needs an age of at least zero, not \(age)")
        withLock { startTrackingAge() }
        trimToAge(age.seconds, waitsForLock: true)
    }

    /// Evicts entries, in the policy's order, until at most `fraction` (0...1) of
    /// the current count and total cost remain; 0 empties the cache.
    ///
    /// - Throws: `KVCacheError.invalidArgument` for a fraction outside 0...1 or NaN.
    public func trim(toFraction fraction: Double, reason: EvictionReason = .pressure) throws {
        try Validation.checkFraction(fraction, "trim(toFraction:)")
        let (count, cost) = withLock {
            (Int((Double(storage.count) * fraction).rounded(.down)), storage.totalCost.scaled(by: fraction))
        }
        evictInBursts(reason: reason, waitsForLock: true) {
            storage.count > count || storage.totalCost.exceeds(cost)
        }
    }

    // MARK: - Internals

    func withLock<T>(_ body: () -> T) -> T {
        mutex.lock()
        defer { mutex.unlock() }
        replayPendingReads()
        return body()
    }

    /// Turns on age tracking, counting every entry as read now. Called with the lock held.
    func startTrackingAge() {
        guard !limits.tracksAge else { return }
        storage.requireCacheLockForReads()
        limits.tracksAge = true
        storage.stampAll(accessTime: clock.monotonicNow())
    }

    /// Trims to the low watermark of each limit that is exceeded.
    func trimToLimits(waitsForLock: Bool = true) {
        var purgingCount = false
        evictInBursts(reason: .count, waitsForLock: waitsForLock) {
            purgingCount = purgingCount || storage.count > limits.count
            return purgingCount && storage.count > limits.countTarget
        }
        var purgingCost = false
        evictInBursts(reason: .cost, waitsForLock: waitsForLock) {
            purgingCost = purgingCost || storage.totalCost.exceeds(limits.cost)
            return purgingCost && storage.totalCost.exceeds(limits.costTarget)
        }
    }

    func trimToAge(_ age: Double, waitsForLock: Bool) {
        guard !age.isNaN, age < .infinity else { return }
        guard !isAdaptive else {
            // The adaptive policy's lists are not ordered by the time of the last
            // read (probation holds entries in the order they were admitted), so the
            // slab is scanned.
            removeEntries(waitsForLock: waitsForLock) {
                guard limits.tracksAge else { return nil }
                let now = clock.monotonicNow() + clock.monotonicSlack()
                return { now - $0.accessTime > max(age, 0) }
            }
            return
        }
        evictInBursts(reason: .expired, waitsForLock: waitsForLock) {
            guard limits.tracksAge, storage.tail != LRUStorage<Key, Value>.none else { return false }
            let now = clock.monotonicNow() + clock.monotonicSlack()
            return now - storage.times(at: storage.tail).accessTime > max(age, 0)
        }
    }

    /// Evicts least recently used entries while `shouldEvict` holds (checked
    /// with the lock held).
    func evictInBursts(reason: EvictionReason, waitsForLock: Bool, while shouldEvict: () -> Bool) {
        inBursts(waitsForLock: waitsForLock) { removals in
            for _ in 0..<Self.burstSize {
                guard shouldEvict() else { return true }
                evictNext(reason: reason, into: &removals)
            }
            return false
        }
    }

    /// Removes entries whose deadline has passed, scanning the slab a chunk at a time.
    func removeExpiredEntries(waitsForLock: Bool) {
        removeEntries(waitsForLock: waitsForLock) {
            guard storage.expiringCount > 0 else { return nil }
            let now = clock.wallUpperBound()
            return { $0.deadline <= now }
        }
    }

    /// Removes, as expired, the entries whose times satisfy the test that `makeTest`
    /// returns for each burst (with the lock held; nil when there is nothing to
    /// remove), scanning the slab a chunk at a time.
    func removeEntries(
        waitsForLock: Bool, makeTest: () -> ((LRUStorage<Key, Value>.Times) -> Bool)?
    ) {
        var cursor: Int32 = 0
        inBursts(waitsForLock: waitsForLock) { removals in
            guard let isExpired = makeTest() else { return true }
            let end = min(storage.initializedCount, cursor &+ 4096)
            var evicted = 0
            while cursor < end, evicted < Self.burstSize {
                if storage.isLive(cursor), isExpired(storage.times(at: cursor)) {
                    expire(at: cursor, into: &removals)
                    evicted += 1
                }
                cursor += 1
            }
            return cursor >= storage.initializedCount
        }
    }

    /// Runs `burst` with the lock held, again and again until it reports it
    /// is done, releasing the lock in between so callers are never stalled
    /// for long. Without `waitsForLock` (the background trim), a busy lock
    /// makes it back off, and give up until next time if the lock stays busy.
    func inBursts(waitsForLock: Bool, _ burst: (inout Removals) -> Bool) {
        var busyCount = 0
        while true {
            if waitsForLock {
                mutex.lock()
            } else if !mutex.tryLock() {
                busyCount += 1
                if busyCount > 100 { return }
                usleep(1_000)
                continue
            }
            replayPendingReads()
            var removals = Removals()
            let done = burst(&removals)
            takeFullReleaseBatch(into: &removals)
            unlockAfterChange()
            complete(consume removals)
            if done { return }
        }
    }

    /// The periodic background trim: enforces the limits, removes expired
    /// entries and hands pending releases to the background queue.
    func autoTrim() {
        trimToLimits(waitsForLock: false)
        let age = withLock { limits.age }
        if age.isFinite { trimToAge(age, waitsForLock: false) }
        removeExpiredEntries(waitsForLock: false)
        guard mutex.tryLock() else { return }
        let batch = takePendingReleases()
        var retired = storage.takeReleased()
        mutex.unlock()
        releaser.release(consume batch)
        free(all: &retired)
    }
}

extension MemoryCache {
    /// Unlocks the cache after a change. A checking build (`-Xswiftc -DKVCACHE_CHECKS`)
    /// first verifies every invariant of the storage and the read lanes, and stops at
    /// the first change that breaks one.
    @inlinable
    func unlockAfterChange() {
        #if KVCACHE_CHECKS
        checkInvariants()
        #endif
        mutex.unlock()
    }

    /// Stops the program if the storage or the read lanes break an invariant: after
    /// every change while the cache holds up to `checkedEveryChangeUpTo` entries (each
    /// check reads them all), after one change in that many beyond. Called with the lock held.
    @usableFromInline
    func checkInvariants() {
        changesSinceCheck &+= 1
        guard storage.count <= Self.checkedEveryChangeUpTo || changesSinceCheck >= Self.checkedEveryChangeUpTo else {
            return
        }
        changesSinceCheck = 0
        let violations = storage.invariantViolations() + storage.laneViolations()
            + (isAdaptive ? adaptive.duels.invariantViolations() + (adaptive.gradient?.invariantViolations() ?? []) : [])
        precondition(violations.isEmpty, "MemoryCache invariants broken: \(violations)")
    }

    static var checkedEveryChangeUpTo: Int { 2_048 }
}
