import Foundation
#if Metrics
import Metrics
#endif
#if Tracing
import Tracing
#endif

/// A two-level cache: values in memory first, then on disk, with disk hits
/// promoted into memory.
///
/// Values of any type go through a ``CacheCoder``: `Data` passes through
/// untouched and any `Codable` type can use ``JSONCoder`` or ``PropertyListCoder``.
/// The memory level holds decoded values; the disk level holds their encodings.
///
/// ```swift
/// let thumbnails = try Cache<Data>(name: "thumbnails", baseDirectory: cachesURL)
/// try thumbnails.setValue(png, forKey: url.absoluteString, expiration: .after(.seconds(7 * 86_400)))
/// let hit = try thumbnails.value(forKey: url.absoluteString)
/// ```
///
/// Keys are compared by their UTF-8 bytes: canonically equivalent spellings
/// such as "é" and "e\u{301}" are different keys, in both levels. (Swift's
/// `String ==` would call them equal; SQLite, like this cache, would not.)
///
/// A stored value that no longer decodes (its type changed, say) makes a read
/// throw ``KVCacheError/Code-swift.struct/decodingFailed`` and, by default, is removed,
/// so the next read is a plain miss; other entries are unaffected.
public final class Cache<Value: Sendable>: Sendable {
    /// The name given to `init(name:baseDirectory:...)`, or nil.
    public let name: String?
    /// The directory of the disk level.
    public let directory: URL
    /// The memory level (a ``MemoryCache`` comparing keys byte-wise): its reads,
    /// statistics, limits, trims and removals; values are stored through the cache.
    /// Register it with a ``MemoryPressureMonitor`` to trim it under pressure.
    public let memory: MemoryLevel
    /// The disk level: statistics, trims, `verify`, `inspect`, `info(forKey:)`, key
    /// listings, and raw bytes. Everything through it is safe: a value stored, removed or
    /// touched through it drops the memory level's copy of that key (a removal by prefix
    /// or of everything drops those copies), so the next read through the cache sees the
    /// disk's value. A value trimmed there may still be served from memory until memory
    /// lets it go.
    public let disk: DiskCache
    /// Turns values into the disk level's bytes and back.
    public let coder: any CacheCoder<Value>

    /// The level shared with other nodes (`configuration.remote`), or nil. With a tracer
    /// (package trait `Tracing`), a wrapper of it that traces each call.
    public let remote: (any RemoteLevel)?
    #if Tracing
    /// Traces each load (package trait `Tracing`); nil without a tracer, so nothing is paid.
    let tracer: (any Tracer)?
    #endif
    /// The queue of `.background` remote writes; nil for `.immediate`.
    let remoteWrites: RemoteWriteQueue?
    let remoteResynchronization: RemoteResynchronization
    /// The remote operations that failed, replayed once the level answers (see
    /// ``RemoteRecovery``); nil without a remote level or with recovery off.
    let remoteRecovery: RemoteRecoveryQueue?

    let cost: (@Sendable (Value) -> Int64)?
    let removesUndecodableValues: Bool
    @usableFromInline let writes: WriteCoordinator
    let counters = CacheCounters()
    let loads: SingleFlight<ByteWiseKey, LoadResult<Value>>
    let refreshes = BackgroundRefreshes()
    /// `configuration.failSafe`, and the keys it serves stale without computing for now.
    let failSafe: FailSafe?
    let failSafeRetries = FailSafeRetries()
    /// `configuration.remoteLoadLease`; the loads waiting for another node's value; and
    /// what tests observe when a load starts waiting.
    let remoteLoadLease: Duration?
    let remoteChangeWaiters = RemoteChangeWaiters()
    let didWaitForRemoteLease: @Sendable (String) -> Void

    /// Opens the cache `name` in `baseDirectory/name/`, so caches with different
    /// names share a base directory without touching each other.
    ///
    /// - Throws: `KVCacheError.invalidArgument` unless `name` is 1–255 ASCII letters,
    ///   digits, `.`, `-` or `_` (and not `.` or `..`); the disk level's errors.
    public convenience init(
        name: String, baseDirectory: URL, coder: some CacheCoder<Value>, configuration: Configuration = .init()
    ) throws {
        try CacheName.validate(name)
        try self.init(
            directory: baseDirectory.appendingPathComponent(name, isDirectory: true), name: name,
            coder: coder, configuration: configuration, memoryClock: .system)
    }

    /// Opens the cache whose disk level lives in `directory`.
    public convenience init(
        directory: URL, coder: some CacheCoder<Value>, configuration: Configuration = .init()
    ) throws {
        try self.init(directory: directory, name: nil, coder: coder, configuration: configuration, memoryClock: .system)
    }

    /// Tests pass a manual memory clock (and a disk clock in `configuration.disk`), and
    /// may observe callers joining a load (see `SingleFlight`).
    init(
        directory: URL, name: String?, coder: any CacheCoder<Value>, configuration: Configuration,
        memoryClock: CacheClock, didJoinLoad: @escaping @Sendable (String, Int) -> Void = { _, _ in },
        didWaitForRemoteLease: @escaping @Sendable (String) -> Void = { _ in }
    ) throws {
        // The memory level first: its configuration is validated before the disk level is opened.
        memory = try MemoryLevel(configuration: configuration.memory, clock: memoryClock)
        try configuration.failSafe?.validate()
        try configuration.remoteRecovery.validate()
        try Validation.check(configuration.remoteLoadLease.map { $0 > .zero && $0 <= .seconds(3600) } ?? true,
                             "remoteLoadLease must be more than zero and at most an hour")
        var diskConfiguration = configuration.disk
        // The disk level keeps expired values as long as fail-safe may serve them, no longer.
        diskConfiguration.expiredRetention = configuration.failSafe?.maxStaleness ?? .zero
        disk = try DiskCache(directory: directory, configuration: diskConfiguration)
        failSafe = configuration.failSafe
        remoteLoadLease = configuration.remoteLoadLease
        self.didWaitForRemoteLease = didWaitForRemoteLease
        self.name = name
        self.directory = directory
        self.coder = coder
        cost = configuration.cost
        #if Tracing
        let tracer = TracedRemoteLevel.tracer(configured: configuration.tracer)
        self.tracer = tracer
        let remote = configuration.remote.map { level in tracer.map { TracedRemoteLevel(level, tracer: $0) } ?? level }
        #else
        let remote = configuration.remote
        #endif
        self.remote = remote
        remoteWrites = configuration.remote != nil && configuration.remoteWrite == .background ? RemoteWriteQueue() : nil
        remoteResynchronization = configuration.remoteResynchronization
        if let remote, configuration.remoteRecovery.maxEntries > 0 {
            let counters = counters
            remoteRecovery = RemoteRecoveryQueue(configuration: configuration.remoteRecovery,
                                                 diagnostics: disk.diagnostics, path: disk.path,
                                                 probe: { try remote.probe() }) { operation in
                try operation.perform(on: remote) { counters.remoteValuesTooLarge.wrappingAdd(1, ordering: .relaxed) }
            }
        } else {
            remoteRecovery = nil
        }
        removesUndecodableValues = configuration.removesUndecodableValues
        writes = WriteCoordinator(disk: disk)
        loads = SingleFlight(didJoin: { key, count in didJoinLoad(key.string, count) })
        configuration.memoryPressureMonitor?.register(memory)
        // Weak: the disk level must not keep the cache alive.
        disk.directChanges.withLock { $0 = { [weak self] change in self?.diskChangedDirectly(change) } }
        // Last: the first resynchronization runs before this returns, on a complete cache.
        do {
            try remote?.subscribe { [weak self] change in self?.remoteChanged(change) }
        } catch {
            try? disk.close()
            throw error
        }
        #if Metrics
        if let label = configuration.disk.metricsLabel {
            let metrics = CacheMetrics(label: label, factory: configuration.disk.metricsFactory ?? MetricsSystem.factory)
            // Weak: the disk level must not keep the cache alive.
            disk.alsoReport.withLock { $0 = { [weak self] in if let self { metrics.report(self.statistics) } } }
        }
        #endif
    }

    #if Metrics
    /// Exports the statistics of both levels and of the cache's loads now (package trait
    /// `Metrics`, with `configuration.disk.metricsLabel`): the disk level's metrics, and
    /// `kvcache_memory_hits`, `_misses`, `_sets`, `_evictions` (dimension `reason`), the
    /// gauges `kvcache_memory_entries` and `_cost`, and `kvcache_cache_disk_hits`, `_misses`,
    /// `_computations`, `_joined_loads`, `_refreshes`, `_failed_refreshes`,
    /// `_failed_background_writes` and `_fail_safe_serves`, each with the dimension
    /// `cache` = the label. They are also exported every `metricsInterval` and at close.
    public func reportMetrics() {
        disk.reportMetrics()
    }
    #endif

    // MARK: - Reading

    /// The value for `key`, from memory, else from disk, else from the remote level, or nil.
    ///
    /// - Throws: `KVCacheError.decodingFailed` if the stored bytes do not decode;
    ///   the disk level's errors.
    // Inlinable, like the memory level's reads: a memory hit then costs what it
    // costs on `MemoryCache` itself, specialized for the caller's value type.
    @inlinable
    public func value(forKey key: String) throws -> Value? {
        if let value = memory.value(forKey: key) { return value }
        return try diskResult(forKey: key).value
    }

    /// The value for `key` and the level it came from.
    @inlinable
    public func result(forKey key: String) throws -> CacheResult<Value> {
        if let value = memory.value(forKey: key) { return .memory(value) }
        return try diskResult(forKey: key)
    }

    /// Reads the disk level (then the remote level) and promotes a hit into memory (and a
    /// remote hit onto disk).
    @inlinable
    func diskResult(forKey key: String) throws -> CacheResult<Value> {
        var promotion = Promotion()
        let token = writes.beginRead(key)
        guard let value = try readDisk(forKey: key, token: token, promotion: &promotion) else { return .none }
        promote(value, forKey: key, token: token, promotion)
        return promotion.remoteData == nil ? .disk(value) : .remote(value)
    }

    /// Stores a disk hit in memory, or a remote hit on disk and in memory, unless the key
    /// changed since the read began; ends the read.
    // Here rather than in `readDisk`: inlined into the caller, the memory write is specialized.
    @inlinable
    func promote(_ value: Value, forKey key: String, token: WriteCoordinator.ReadToken, _ promotion: Promotion) {
        writes.promote(token) {
            if let data = promotion.remoteData { storeRemoteHitOnDisk(data, forKey: key, expiration: promotion.expiration) }
            memory.promote(value, forKey: key, cost: promotion.cost, expiration: promotion.expiration)
        }
    }

    /// The decoded value for `key` from the disk level (or from a background write
    /// not landed yet), counted as a disk hit or a miss, with what its promotion needs.
    @usableFromInline
    func readDisk(forKey key: String, token: WriteCoordinator.ReadToken, promotion: inout Promotion,
                  readsRemote: Bool = true) throws -> Value? {
        let entry: (data: Data, expiration: Expiration)?
        if let write = writes.pendingWrite(forKey: key) {
            entry = write.isExpired(at: disk.configuration.clock())
                ? nil : (write.data, Expiration(deadline: write.deadline))
        } else {
            entry = try disk.entry(forKey: key)
        }
        guard let entry else {
            guard readsRemote else { return nil }  // the caller reads the remote level, and counts
            if let value = readRemote(forKey: key, promotion: &promotion) { return value }
            counters.misses.wrappingAdd(1, ordering: .relaxed)
            return nil
        }
        let value: Value
        do {
            value = try coder.decode(entry.data)
        } catch {
            counters.decodingFailures.wrappingAdd(1, ordering: .relaxed)
            if removesUndecodableValues {
                // Only if nothing replaced it meanwhile: the new value may decode.
                try writes.mutateIfUnchanged(token) { try disk.removeValue(forKey: key, reportsChange: false) }
            }
            throw KVCacheError.decodingFailed(key: key, message: String(describing: error), underlyingError: error)
        }
        counters.diskHits.wrappingAdd(1, ordering: .relaxed)
        promotion.cost = cost(of: value, encodedSize: entry.data.count)
        promotion.expiration = entry.expiration
        return value
    }

    /// Whether either level holds a live value for `key`. Does not count as a read.
    public func contains(_ key: String) throws -> Bool {
        if memory.contains(key) { return true }
        if let write = writes.pendingWrite(forKey: key) { return !write.isExpired(at: disk.configuration.clock()) }
        return try disk.contains(key)
    }

    /// When `key`'s live value expires: `.never`, or `.at` its deadline, from the memory
    /// level, else a write queued for disk, else the disk level; nil if neither level holds
    /// a live value. Does not count as a read. The remaining lifetime is the date's
    /// distance from now.
    public func expiration(forKey key: String) throws -> Expiration? {
        try validate(key)
        if let expiration = memory.expiration(forKey: key) { return expiration }
        if let write = writes.pendingWrite(forKey: key) {
            if write.isExpired(at: disk.configuration.clock()) { return nil }
            return Expiration(deadline: write.deadline)
        }
        guard let info = try disk.info(forKey: key) else { return nil }
        return info.expirationDate.map { .at($0) } ?? .never
    }

    /// The extended data stored on disk with `key`'s value, or nil.
    public func extendedData(forKey key: String) throws -> Data? {
        if let write = writes.pendingWrite(forKey: key) {
            return write.isExpired(at: disk.configuration.clock()) ? nil : write.extendedData
        }
        return try disk.extendedData(forKey: key)
    }

    // MARK: - Writing

    /// Stores `value` for `key` in memory, as `diskWrite` says on disk, and in the remote
    /// level (as `configuration.remoteWrite` says; its failure is counted, not thrown).
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key: not empty, and at most `maxKeyLength` UTF-8 bytes (see
    ///     ``DiskCache/Configuration``); `KVCacheError.invalidKey` otherwise.
    ///   - expiration: When the value stops being returned, by both levels.
    ///   - extendedData: Small metadata kept beside the value on disk
    ///     (not with `.skipped`, which keeps nothing on disk).
    ///   - diskWrite: `.immediate` (default), `.background` or `.skipped`.
    /// - Throws: `KVCacheError.encodingFailed`; with `.immediate`, the disk level's
    ///   errors, and then neither level changes.
    @inlinable
    public func setValue(
        _ value: Value, forKey key: String, expiration: Expiration = .never, extendedData: Data? = nil,
        diskWrite: DiskWrite = .immediate
    ) throws {
        try store(value, forKey: key, expiration: expiration, extendedData: extendedData, diskWrite: diskWrite)
    }

    /// `setValue`, under a name async code can call without picking the async variant.
    /// Inlinable so the memory write is specialized for the caller's value type.
    @inlinable
    func store(_ value: Value, forKey key: String, expiration: Expiration, extendedData: Data?,
               diskWrite: DiskWrite) throws {
        let (data, cost) = try prepareWrite(value, forKey: key)
        // The `remote != nil` checks below spare a cache without a remote level a call per set.
        switch diskWrite {
        case .immediate:
            try writes.mutate(key) {
                try disk.setValue(data, forKey: key, expiration: expiration, extendedData: extendedData, reportsChange: false)
                memory.setValue(value, forKey: key, cost: cost, expiration: expiration)
                if remote != nil { writeRemote(data, forKey: key, expiration: expiration) }
            }
        case .background:
            writes.enqueue(data, forKey: key, expiration: expiration, extendedData: extendedData) {
                memory.setValue(value, forKey: key, cost: cost, expiration: expiration)
                if remote != nil { writeRemote(data, forKey: key, expiration: expiration) }
            }
        case .skipped:
            // An older value left on disk would come back once memory evicts this one.
            try writes.mutate(key) {
                try disk.removeValue(forKey: key, reportsChange: false)
                memory.setValue(value, forKey: key, cost: cost, expiration: expiration)
                if remote != nil { writeRemote(data, forKey: key, expiration: expiration) }
            }
        }
    }

    /// Gives `key`'s value a new expiration, counted from now, in every level (and in a
    /// write queued for disk); returns whether the memory or disk level held a live value.
    @discardableResult
    public func touch(_ key: String, expiration: Expiration) throws -> Bool {
        try validate(key)
        return try writes.mutate(key, supersedesQueuedWrite: false) {
            let queued = writes.retimeQueuedWrite(forKey: key, expiration: expiration)
            let onDisk = try disk.touch(key, expiration: expiration, reportsChange: false)
            let inMemory = memory.touch(key, expiration: expiration)
            touchRemote(key, expiration: expiration)
            return queued || onDisk || inMemory
        }
    }

    /// Stores `value` for `key` in both levels only if neither holds a live value for it
    /// (nor is one queued for disk), and returns whether it did. Atomic across processes
    /// sharing the disk level: the disk level decides (see `DiskCache.setValueIfAbsent`),
    /// and only the caller whose value it stored puts it in memory. A copy in this
    /// process's memory level counts as present even if another process has since removed
    /// the value from disk (memory levels are per process: see the Multi-Process Use article).
    @discardableResult
    public func setValueIfAbsent(_ value: Value, forKey key: String, expiration: Expiration = .never) throws -> Bool {
        try validate(key)
        let data = try encode(value)
        let cost = cost(of: value, encodedSize: data.count)
        // Not superseding a queued write: one there means the key has a value.
        return try writes.mutate(key, supersedesQueuedWrite: false) {
            if writes.pendingWrite(forKey: key) != nil || memory.contains(key) { return false }
            guard try disk.setValueIfAbsent(data, forKey: key, expiration: expiration, extendedData: nil,
                                           reportsChange: false) else { return false }
            memory.setValue(value, forKey: key, cost: cost, expiration: expiration)
            counters.sets.wrappingAdd(1, ordering: .relaxed)
            writeRemote(data, forKey: key, expiration: expiration)
            return true
        }
    }

    /// Stores every value of `values` in both levels, with one expiration: on disk in one
    /// transaction (see `DiskCache.setValues`). If encoding or the disk level throws,
    /// neither level changes.
    public func setValues(_ values: [String: Value], expiration: Expiration = .never) throws {
        guard !values.isEmpty else { return }
        var encoded: [String: Data] = [:]
        var costs: [String: Int64] = [:]
        for (key, value) in values {
            let (data, cost) = try prepareWrite(value, forKey: key)
            encoded[key] = data
            costs[key] = cost
        }
        try writes.mutate(keys: Array(values.keys)) {
            try disk.setValues(encoded, expiration: expiration, reportsChange: false)
            for (key, value) in values {
                memory.setValue(value, forKey: key, cost: costs[key] ?? 0, expiration: expiration)
            }
            for (key, data) in encoded { writeRemote(data, forKey: key, expiration: expiration) }
        }
    }

    /// The values for `keys` that any level holds (missing keys are absent), each read as
    /// `value(forKey:)` reads it; the keys no local level holds are read from the remote
    /// level in one call.
    public func values(forKeys keys: [String]) throws -> [String: Value] {
        var found: [String: Value] = [:]
        guard remote != nil else {
            for key in keys where found[key] == nil {
                if let value = try value(forKey: key) { found[key] = value }
            }
            return found
        }
        var localMisses: [(key: String, token: WriteCoordinator.ReadToken)] = []
        var looked = Set<String>()
        for key in keys where looked.insert(key).inserted {
            if let value = memory.value(forKey: key) {
                found[key] = value
                continue
            }
            var promotion = Promotion()
            let token = writes.beginRead(key)
            guard let value = try readDisk(forKey: key, token: token, promotion: &promotion, readsRemote: false)
            else {
                localMisses.append((key, token))
                continue
            }
            promote(value, forKey: key, token: token, promotion)
            found[key] = value
        }
        guard !localMisses.isEmpty else { return found }
        let remoteHits = readRemote(forKeys: localMisses.map(\.key))
        for (key, token) in localMisses {
            guard let (value, promotion) = remoteHits[key] else {
                counters.misses.wrappingAdd(1, ordering: .relaxed)
                continue
            }
            promote(value, forKey: key, token: token, promotion)
            found[key] = value
        }
        return found
    }

    /// Removes the value for `key` from every level.
    /// If the disk level throws, no level changes (the old value cannot come
    /// back from disk after memory dropped it).
    public func removeValue(forKey key: String) throws {
        try writes.mutate(key) {
            try disk.removeValue(forKey: key, reportsChange: false)
            memory.removeValue(forKey: key)
            removeRemote(forKey: key)
        }
    }

    /// Removes every value whose key starts with `prefix` (byte-wise) from both levels,
    /// and returns how many the disk level held. Cheap on disk: one range of the
    /// manifest's primary key. Queued background writes of such keys are dropped; reads
    /// of other keys go on meanwhile. If the disk level throws, memory is unchanged and
    /// some of the disk entries may be gone.
    @discardableResult
    public func removeValues(withPrefix prefix: String) throws -> Int {
        try writes.removeValues(withPrefix: prefix, disk: {
            let removed = try disk.removeValues(withPrefix: prefix, reportsChange: false)
            removeRemote(withPrefix: prefix)
            return removed
        }, memory: { memory.removeValues(withPrefix: prefix) })
    }

    /// Removes every value from every level (queued background writes are dropped).
    public func removeAll() throws {
        try writes.mutate(nil) {
            memory.removeAll()
            try disk.removeAll(reportsChange: false)
            removeRemote(withPrefix: "")
        }
    }

    /// Removes every value, reporting `(removed, total)` disk entries after each step.
    public func removeAll(progress: (_ removed: Int, _ total: Int) -> Void) throws {
        try writes.mutate(nil) {
            memory.removeAll()
            try disk.removeAll(reportsChange: false, progress: progress)
            removeRemote(withPrefix: "")
        }
    }

    /// Blocks until the `.background` disk writes made so far have landed.
    ///
    /// - Throws: the first background write failure not reported before; such a
    ///   value was kept in memory only.
    public func waitForBackgroundWrites() throws {
        try writes.waitForBackgroundWrites()
        waitForRemoteWrites()
    }

    /// Lands background writes, then commits the disk level; with `.synced` (the
    /// default) the writes also survive a power loss (see `DiskCache.Durability`).
    public func flush(durability: DiskCache.Durability = .synced) throws {
        try waitForBackgroundWrites()
        try disk.flush(durability: durability)
    }

    /// Lands background writes, closes the disk level and empties the memory level
    /// (see ``MemoryCache/close()``); later disk operations throw `KVCacheError.closed`.
    /// Both levels are closed even when this throws: the error is a background write's
    /// failure, or the disk level's (see `DiskCache.close()`: writes it could not commit).
    public func close() throws {
        remote?.stopSubscription()
        var failure: Error?
        do { try waitForBackgroundWrites() } catch { failure = error }
        remoteRecovery?.close()
        do { try disk.close() } catch { failure = failure ?? error }
        do { try memory.close() } catch { failure = failure ?? error }
        if let failure { throw failure }
    }

    /// Drops the memory copies a change made directly through `disk` made stale (the cache's
    /// own writes do not report theirs). As a mutation, so a promotion that read the old value
    /// is dropped too.
    func diskChangedDirectly(_ change: DiskCache.DirectChange) {
        switch change {
        case .key(let key):
            writes.mutate(key) { _ = memory.removeValue(forKey: key) }
        case .prefix(let prefix):
            writes.removeValues(withPrefix: prefix, disk: {}, memory: { memory.removeValues(withPrefix: prefix) })
        case .all:
            writes.mutate(nil) { memory.removeAll() }
        }
    }

    // MARK: - Coding

    /// Validates the key, encodes the value, weighs it and counts the set.
    @usableFromInline
    func prepareWrite(_ value: Value, forKey key: String) throws -> (data: Data, cost: Int64) {
        try validate(key)
        let data = try encode(value)
        counters.sets.wrappingAdd(1, ordering: .relaxed)
        return (data, cost(of: value, encodedSize: data.count))
    }

    func encode(_ value: Value) throws -> Data {
        do {
            return try coder.encode(value)
        } catch {
            throw KVCacheError.encodingFailed(String(describing: error), underlyingError: error)
        }
    }

    func cost(of value: Value, encodedSize: Int) -> Int64 {
        cost?(value) ?? Int64(encodedSize)
    }

    /// Rejects keys the disk level would reject, before memory takes them.
    func validate(_ key: String) throws {
        if key.isEmpty { throw KVCacheError.invalidKey(reason: "the key is empty") }
        if key.utf8.count > disk.configuration.maxKeyLength {
            throw KVCacheError.invalidKey(reason: "the key is longer than \(disk.configuration.maxKeyLength) UTF-8 bytes")
        }
    }
}

/// What promoting a disk or remote hit into the levels above needs besides the value.
@usableFromInline
struct Promotion {
    @usableFromInline var cost: Int64 = 0
    /// The disk entry's, so the memory copy does not outlive it.
    @usableFromInline var expiration: Expiration = .never
    /// The bytes of a remote hit, which the promotion also writes to disk; nil for a disk hit.
    @usableFromInline var remoteData: Data?

    @usableFromInline init() {}
}
