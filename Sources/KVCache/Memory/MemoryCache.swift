import CProcessor
import Dispatch
import Foundation
#if Metrics
import Metrics
#endif

/// Marks the queues that run background trims.
private let trimQueueKey = DispatchSpecificKey<Bool>()

/// A thread-safe, in-memory cache that evicts entries to stay within a count, a
/// total cost and an age limit: by default the ones least likely to be used again
/// (``EvictionPolicy/adaptive``), or exactly the least recently used
/// (``EvictionPolicy/lru``).
///
/// Reads, writes and removals take constant time. Under the adaptive policy a read
/// takes only the lock of the table stripe that holds its key, so reads on several
/// threads run side by side, and beside a write (entries that can expire, and age
/// limits, make reads take the cache's lock). Entries may also expire
/// after a time given when they are stored. Evicted values are released on a
/// background queue, so the caller never pays for their deinitialization, and
/// a background timer removes expired entries without stalling callers.
///
/// Keys are compared as their `Key` type's `Hashable` conformance says: a
/// standalone `MemoryCache<String, _>` uses Swift's `String` equality, under
/// which canonically equivalent spellings such as "é" and "e\u{301}" are one
/// key. (The memory level of a ``Cache`` compares keys by their UTF-8 bytes,
/// like the disk level.)
///
/// ```swift
/// let images = try MemoryCache<URL, Image>(configuration: .init(costLimit: 100 << 20))
/// images.setValue(image, forKey: url, cost: Int64(image.byteCount))
/// let hit = images[url]
/// ```
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    // Everything declared with `var` is guarded by `mutex`; the rest is immutable.
    // The mutex already guarantees exclusive access, so the run-time exclusivity
    // checks on these class properties (about 15 % of a set) are turned off.
    @usableFromInline let mutex = PThreadMutex()
    /// A `let` whose contents are swapped out, not a `var`: reading a class
    /// reference from a `var` makes every read retain and release it.
    @usableFromInline let storage: LRUStorage<Key, Value>
    /// Whether entries are kept by the adaptive policy (else exact LRU).
    @usableFromInline let isAdaptive: Bool
    /// The adaptive policy's state; an unbounded placeholder, never used, under `.lru`.
    /// Not optional: every unwrap on the read replay's path cost a tag check.
    @usableFromInline @exclusivity(unchecked) var adaptive: AdaptivePolicy<Key>
    /// Whether the adaptive policy counts uses: while some limit is set (`adaptive.isBounded`).
    @usableFromInline @exclusivity(unchecked) var policyCountsUses = false
    @usableFromInline @exclusivity(unchecked) var counters = MemoryCacheCounters()
    @usableFromInline @exclusivity(unchecked) var limits: MemoryCacheLimits
    /// Evicted values waiting to be handed to the background releaser in one batch.
    @usableFromInline @exclusivity(unchecked) var pendingReleases = ContiguousArray<Value>()
    @usableFromInline @exclusivity(unchecked) var pendingCost: Int64 = 0
    /// Changes since a checking build last verified the invariants (`checkInvariants`).
    @usableFromInline @exclusivity(unchecked) var changesSinceCheck = 0

    @usableFromInline let clock: CacheClock
    @usableFromInline let onEviction: (@Sendable (Key, Value, EvictionReason) -> Void)?
    @usableFromInline let releasesValuesInBackground: Bool
    @usableFromInline let extendsExpirationOnAccess: Bool
    /// Whether a set of a live key whose cost stays replaces the value holding only the
    /// key's stripe's locks (`replaceInPlace`): under the adaptive policy, unless the
    /// replaced value must be both reported and released in the background.
    @usableFromInline let replacesInPlace: Bool
    /// Whether the cache times its serialized sections (`serialSections`): for benchmarks.
    @usableFromInline let measuresSerialSections: Bool
    @usableFromInline @exclusivity(unchecked) var serialSectionCounters = SerialSectionCounters()
    @usableFromInline let releaser = BackgroundReleaser(label: "KVCache.MemoryCache.release")
    private let timer: DispatchSourceTimer?
    /// Runs the timer's trims one at a time, so `waitForBackgroundWork()` can wait for one in progress.
    private let trimQueue: DispatchQueue?
    #if Metrics
    /// Exports the statistics (package trait `Metrics`; see `Configuration.metricsLabel`).
    let metrics: MemoryMetrics?
    /// Fires every `metricsInterval` while the cache is open.
    private let metricsTimer: DispatchSourceTimer?
    #endif

    /// Creates an empty cache with no limits (the default configuration).
    public convenience init() {
        self.init(validConfiguration: Configuration(), clock: .system)
    }

    /// Creates an empty cache.
    ///
    /// - Throws: `KVCacheError.invalidArgument` for a setting out of its documented
    ///   range (a negative limit or duration, a `lowWatermark` outside (0, 1]).
    public convenience init(configuration: Configuration) throws {
        try self.init(configuration: configuration, clock: .system)
    }

    /// Creates an empty cache that reads time from `clock` (tests pass a manual clock).
    convenience init(configuration: Configuration, clock: CacheClock) throws {
        try configuration.validate()
        self.init(validConfiguration: configuration, clock: clock)
    }

    /// Creates an empty cache that times the sections only one thread at a time runs
    /// (`serialSections`), which costs two clock reads per section.
    @_spi(Benchmarks)
    public convenience init(configuration: Configuration, measuringSerialSections: Bool) throws {
        try configuration.validate()
        self.init(validConfiguration: configuration, clock: .system, measuresSerialSections: measuringSerialSections)
    }

    private init(validConfiguration configuration: Configuration, clock: CacheClock, measuresSerialSections: Bool = false) {
        self.clock = clock
        self.measuresSerialSections = measuresSerialSections
        switch configuration.policy.kind {
        case .lru:
            isAdaptive = false
            adaptive = AdaptivePolicy(seed: 0, countLimit: .max, costLimit: .max)
        case .adaptive(let seed):
            isAdaptive = true
            adaptive = AdaptivePolicy(seed: seed, countLimit: configuration.countLimit, costLimit: configuration.costLimit)
            policyCountsUses = adaptive.isBounded
        }
        storage = LRUStorage(segmented: isAdaptive, readsNeedCacheLock: configuration.ageLimit != nil)
        storage.slotTarget = LRUStorage<Key, Value>.slotTarget(countLimit: configuration.countLimit)
        limits = MemoryCacheLimits(
            count: configuration.countLimit, cost: configuration.costLimit,
            age: configuration.ageLimit?.seconds ?? .infinity, lowWatermark: configuration.lowWatermark)
        onEviction = configuration.onEviction
        releasesValuesInBackground = configuration.releasesValuesInBackground
        extendsExpirationOnAccess = configuration.extendsExpirationOnAccess
        replacesInPlace = isAdaptive && (configuration.onEviction == nil || !configuration.releasesValuesInBackground)
        storage.setReleaseBatches(
            countLimit: limits.count, costBatch: limits.releaseBatchCost, inBatches: releasesValuesInBackground)
        let interval = configuration.autoTrimInterval?.seconds
        if let interval, !Seconds.isNever(interval) {
            let queue = DispatchQueue(label: "KVCache.MemoryCache.trim", qos: .utility)
            queue.setSpecific(key: trimQueueKey, value: true)
            trimQueue = queue
            timer = DispatchSource.makeTimerSource(queue: queue)
        } else {
            trimQueue = nil
            timer = nil
        }
        pendingReleases.reserveCapacity(limits.releaseBatchCount)
        #if Metrics
        metrics = configuration.metricsLabel.map {
            MemoryMetrics(label: $0, factory: configuration.metricsFactory ?? MetricsSystem.factory)
        }
        metricsTimer = metrics == nil ? nil : Self.startTimer(
            every: configuration.metricsInterval.seconds, label: "KVCache.MemoryCache.metrics")
        metricsTimer?.setEventHandler { @Sendable [weak self] in self?.reportMetrics() }
        metricsTimer?.resume()
        #endif
        if let timer, let interval {
            // Weak, so the timer never keeps the cache alive; deinit cancels it.
            timer.setEventHandler { @Sendable [weak self] in self?.autoTrim() }
            let nanoseconds = Int(min(interval, 1e6) * 1e9)
            timer.schedule(
                deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
                leeway: .nanoseconds(nanoseconds / 10))
            timer.resume()
        }
    }

    deinit {
        timer?.cancel()
        #if Metrics
        metricsTimer?.cancel()
        #endif
        if releasesValuesInBackground {
            // Swap the entries out so the releaser, not this thread, drops the last reference.
            let entries = storage.emptyCopy()
            storage.swapContents(with: entries)
            releaser.release(consume entries)
            releaser.release(takePendingReleases())
            releaser.release(storage.takeReleased())
        }
    }

    // MARK: - Reading

    /// The value stored for `key`, or `nil` if there is none or it has expired.
    /// A hit counts as a use of the entry for the eviction policy.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        // One hash for the stripe and the sketch (LRU's one table needs none), one for the table.
        let (hash, tableHash) = storage.hashes(of: key, withPolicyHash: isAdaptive)
        if isAdaptive {
            switch laneRead(hash: hash, tableHash: tableHash, { $0.entry(forKey: key, hash: tableHash) }) {
            case .hit(let value): return value
            case .miss: return nil
            case .needsCacheLock: break
            }
        }
        mutex.lock()
        // Only entries that can expire need their slot read (a likely cache miss).
        if storage.hasExpiringEntries || limits.tracksAge {
            return timedValue(forKey: key, hash: hash, tableHash: tableHash)
        }
        guard let entry = storage.entry(forKey: key, hash: hash, tableHash: tableHash) else {
            counters.misses &+= 1
            mutex.unlock()
            return nil
        }
        if isAdaptive {
            recordAdaptiveHit(at: entry.index, hash: adaptive.hash.seeded(hash))
        } else {
            storage.moveToFront(entry.index)
        }
        counters.hits &+= 1
        unlockAfterChange()
        return entry.value
    }

    /// An adaptive cache's read under its thread's read lane's lock of the key's stripe
    /// alone: `find` looks the key up in the stripe; a hit is recorded in the lane.
    @inlinable
    func laneRead(hash: UInt32, tableHash: Int,
                  _ find: (TableStripe<Key, LRUStorage<Key, Value>.Entry>) -> LRUStorage<Key, Value>.Entry?)
        -> LaneRead {
        let stripe = storage.stripeIndex(forHash: hash)
        let laneIndex = storage.currentLaneIndex
        let lane = storage.lane(laneIndex, stripe: stripe)
        return storage.withStripe(at: stripe) { tableStripe in
            tableStripe.prefetchBucket(forHash: tableHash)
            if measuresSerialSections { lane.lockCountingWaits() } else { lane.lock() }
            guard lane.readsSkipCacheLock else {
                lane.unlock()
                return .needsCacheLock
            }
            guard let entry = find(tableStripe) else {
                lane.misses &+= 1
                lane.unlock()
                return .miss
            }
            lane.hits &+= 1
            let header = storage.laneHeader(laneIndex)
            let buffered = lane.record(entry.index, hash: hash, header: header)
            if buffered == 1 { header.markPending(stripe: stripe) }
            // A full buffer tries to drain; while drains are busy, one dropped read
            // in `drainRetryInterval` tries again.
            let drains = buffered == LaneStripe.bufferCapacity
                || buffered == 0 && lane.dropped & (Self.drainRetryInterval &- 1) == 0
            lane.unlock()
            if drains { drainReadsIfIdle(lane: laneIndex) }
            return .hit(entry.value)
        }
    }

    /// What a read found under its read lane's lock (of the key's stripe) alone.
    @usableFromInline
    enum LaneRead {
        case hit(Value)
        case miss
        /// Reads must look at the entry's times, under the cache's lock.
        case needsCacheLock
    }

    /// Whether a live entry is stored for `key`. Does not count as a read.
    public func contains(_ key: Key) -> Bool {
        mutex.lock()
        defer { mutex.unlock() }
        guard let entry = storage.entry(forKey: key) else { return false }
        return !isExpired(at: entry.index)
    }

    /// The number of entries, including expired ones not yet removed.
    public var count: Int {
        mutex.lock()
        defer { mutex.unlock() }
        return storage.count
    }

    /// The total cost of the entries (clamped to `Int64.max`).
    public var totalCost: Int64 {
        mutex.lock()
        defer { mutex.unlock() }
        return storage.totalCost.clamped
    }

    /// The value for `key`; assigning `nil` removes the entry, assigning a
    /// value stores it with cost 0 and no expiration.
    public subscript(key: Key) -> Value? {
        get { value(forKey: key) }
        set {
            if let newValue {
                setValue(newValue, forKey: key)
            } else {
                remove(key, returningValue: false)
            }
        }
    }

    // MARK: - Writing

    /// Stores `value` for `key` as the most recently used entry, replacing any
    /// previous value, then evicts entries if a limit is exceeded.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The entry's key.
    ///   - cost: What the entry counts against `costLimit`, such as its size in
    ///     bytes. Negative costs count as 0.
    ///   - expiration: When the entry stops being returned.
    @inlinable
    public func setValue(_ value: Value, forKey key: Key, cost: Int64 = 0, expiration: Expiration = .never) {
        store(value, forKey: key, cost: cost, expiration: expiration, mayBeStored: true)
    }

    /// `setValue`, for a caller that has just missed `key` (`mayBeStored: false`): it
    /// skips the look-up for an in-place replacement, which would almost always fail.
    @inlinable
    func store(_ value: Value, forKey key: Key, cost: Int64, expiration: Expiration, mayBeStored: Bool) {
        var deadline = Double.infinity
        var lifetime = 0.0
        // Hashed once for the stripe and the sketch (LRU's one table needs none), once for the table.
        let (hash, tableHash) = storage.hashes(of: key, withPolicyHash: isAdaptive)
        if case .never = expiration {
            if replacesInPlace, mayBeStored,
               replaceInPlace(value, forKey: key, hash: hash, tableHash: tableHash, cost: max(cost, 0)) {
                return
            }
        } else {
            (deadline, lifetime) = timing(of: expiration)
        }
        var removals = Removals()
        let start = measuresSerialSections ? kvcache_monotonic_nanoseconds() : 0
        mutex.lock()
        let locked = measuresSerialSections ? kvcache_monotonic_nanoseconds() : 0
        let purge = insert(
            value, forKey: key, hash: hash, tableHash: tableHash, cost: max(cost, 0), deadline: deadline, lifetime: lifetime,
            into: &removals)
        if measuresSerialSections { serialSectionCounters.recordLockedSet(start: start, locked: locked) }
        unlockAfterChange()
        complete(consume removals)
        if purge.isNeeded { continuePurge(purge) }
    }

    /// When `key`'s live entry expires: `.never`, or `.at` its deadline (a lifetime that
    /// reads extend is reported as the deadline it has now); nil if there is no live
    /// entry. Does not count as a read. The remaining lifetime is the date's distance
    /// from now.
    public func expiration(forKey key: Key) -> Expiration? {
        mutex.lock()
        defer { mutex.unlock() }
        guard let index = storage.entry(forKey: key)?.index, !isExpired(at: index) else { return nil }
        return Expiration(deadline: storage.times(at: index).deadline)
    }

    /// Gives `key`'s live entry a new expiration, counted from now; returns false if
    /// there is none (an expired entry is removed).
    @discardableResult
    public func touch(_ key: Key, expiration: Expiration) -> Bool {
        let (deadline, lifetime) = timing(of: expiration)
        var removals = Removals()
        mutex.lock()
        replayPendingReads()
        var touched = false
        if let index = storage.entry(forKey: key)?.index {
            if isExpired(at: index) {
                expire(at: index, into: &removals)
            } else {
                storage.setExpiration(at: index, deadline: deadline, lifetime: lifetime)
                touched = true
            }
        }
        takeFullReleaseBatch(into: &removals)
        unlockAfterChange()
        complete(consume removals)
        return touched
    }

    /// Removes the entry for `key` and returns its value, or `nil` if there was
    /// none or it had expired.
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        remove(key, returningValue: true)
    }

    /// Removes the entries whose keys satisfy `shouldRemove` and returns how many were
    /// live. `shouldRemove` runs without the cache's lock, on a snapshot of the keys.
    @discardableResult
    public func removeValues(where shouldRemove: (Key) -> Bool) -> Int {
        mutex.lock()
        var keys = storage.keys()
        mutex.unlock()
        keys.removeAll { !shouldRemove($0) }
        guard !keys.isEmpty else { return 0 }
        var removals = Removals()
        var removed = 0
        mutex.lock()
        for key in keys where removeLocked(key, returningValue: true, into: &removals) != nil { removed += 1 }
        takeFullReleaseBatch(into: &removals)
        unlockAfterChange()
        complete(consume removals)
        return removed
    }

    /// Removes every entry. The entries are released in the background (when
    /// so configured) and reported to `onEviction` as removed.
    public func removeAll() {
        let removed = storage.emptyCopy()
        mutex.lock()
        storage.swapContents(with: removed)
        counters.removed &+= removed.count
        let batch = takePendingReleases()
        unlockAfterChange()
        if let onEviction {
            removed.forEach { onEviction($0, $1, .removed) }
        }
        if releasesValuesInBackground {
            releaser.release(consume removed)
            releaser.release(consume batch)
        }
    }

    /// Ends the cache's background work and gives its memory back: stops the
    /// background trims, removes every entry (reason `.removed`) and waits until
    /// the values are released. A memory cache loses no writes, so this does not
    /// throw today; it throws, like every level's `close()`, so that callers
    /// close all levels alike. The cache stays usable, without background trims.
    public func close() throws {
        timer?.cancel()
        #if Metrics
        metricsTimer?.cancel()
        reportMetrics()
        #endif
        removeAll()
        waitForBackgroundWork()
    }

    /// Blocks until a background trim in progress has finished and values
    /// evicted so far have been released. Lets tests observe background work
    /// without sleeping.
    public func waitForBackgroundWork() {
        // Called from `onEviction` during a background trim, waiting for the
        // trim would wait for itself.
        if let trimQueue, DispatchQueue.getSpecific(key: trimQueueKey) == nil {
            trimQueue.sync {}
        }
        mutex.lock()
        let batch = takePendingReleases()
        var retired = storage.takeReleased()
        mutex.unlock()
        releaser.release(consume batch)
        free(all: &retired)
        releaser.waitUntilIdle()
    }

    /// What the cache has done so far, with its current count and cost.
    public var statistics: Statistics {
        mutex.lock()
        defer { mutex.unlock() }
        var hits = counters.hits, misses = counters.misses, droppedReads = 0, replacements = 0
        if storage.isStriped {
            storage.lanes.forEach { part in
                part.lock()
                hits &+= part.hits
                misses &+= part.misses
                droppedReads &+= part.dropped
                replacements &+= part.replacements
                part.unlock()
            }
        }
        var evictions = counters.evictions
        evictions[.replaced, default: 0] &+= replacements
        return Statistics(
            hits: hits, misses: misses, sets: counters.sets &+ replacements,
            evictions: evictions, count: storage.count, totalCost: storage.totalCost.clamped,
            droppedReads: droppedReads)
    }
}
