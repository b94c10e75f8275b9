#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension MemoryCache: MemoryPressureTrimmable {
    /// The most entries the cache holds. Lowering it trims at once.
    public var countLimit: Int {
        get { withLock { limits.count } }
        set {
            withLock { limits.setCount(newValue) }
            trimToLimits()
        }
    }

    /// The most total cost the cache holds. Lowering it trims at once.
    public var costLimit: Int64 {
        get { withLock { limits.cost } }
        set {
            withLock { limits.setCost(newValue) }
            trimToLimits()
        }
    }

    /// Seconds an entry may go unread before it expires. Lowering it trims at once.
    ///
    /// Reads record the time only once an age limit has been set (reading a
    /// clock costs), so an age limit set on a filled cache counts from that
    /// moment for entries not read since.
    public var ageLimit: Double {
        get { withLock { limits.age } }
        set {
            let age = newValue.isNaN ? .infinity : max(newValue, 0)
            withLock {
                limits.age = age
                if age.isFinite { startTrackingAge() }
            }
            if age.isFinite { trimToAge(age, waitsForLock: true) }
        }
    }

    /// Evicts least recently used entries until at most `count` remain.
    public func trim(toCount count: Int) {
        evictInBursts(reason: .count, waitsForLock: true) { storage.count > max(count, 0) }
    }

    /// Evicts least recently used entries until their total cost is at most `cost`.
    public func trim(toCost cost: Int64) {
        evictInBursts(reason: .cost, waitsForLock: true) { storage.totalCost.exceeds(cost) }
    }

    /// Removes entries not read for more than `age` seconds, as expired.
    ///
    /// The first call on a cache without an age limit starts recording reads
    /// (see ``ageLimit``) and finds every entry fresh.
    public func trim(toAge age: Double) {
        withLock { startTrackingAge() }
        trimToAge(age, waitsForLock: true)
    }

    /// Evicts least recently used entries until at most `fraction` (0...1) of
    /// the current count and total cost remain; 0 empties the cache.
    public func trim(toFraction fraction: Double, reason: EvictionReason = .pressure) {
        let fraction = fraction.isNaN ? 1 : min(max(fraction, 0), 1)
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
        return body()
    }

    /// Turns on age tracking, counting every entry as read now. Called with the lock held.
    func startTrackingAge() {
        guard !limits.tracksAge else { return }
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
                evictLeastRecentlyUsed(reason: reason, into: &removals)
            }
            return false
        }
    }

    /// Removes entries whose deadline has passed, scanning the slab a chunk at a time.
    func removeExpiredEntries(waitsForLock: Bool) {
        var cursor: Int32 = 0
        inBursts(waitsForLock: waitsForLock) { removals in
            guard storage.expiringCount > 0 else { return true }
            let now = clock.wallUpperBound()
            let end = min(storage.initializedCount, cursor &+ 4096)
            var evicted = 0
            while cursor < end, evicted < Self.burstSize {
                let slot = storage.slot(at: cursor)
                if slot.pointee.key != nil, storage.times(at: cursor).deadline <= now {
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
            var removals = Removals()
            let done = burst(&removals)
            takeFullReleaseBatch(into: &removals)
            mutex.unlock()
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
        mutex.unlock()
        releaser.release(consume batch)
    }
}
