import CSQLite
import Dispatch
import Foundation
#if Metrics
import Metrics
#endif

/// A persistent cache of `Data` values in one directory: small values inside a
/// SQLite manifest, large ones in their own files (see `Configuration`).
///
/// Thread-safe. Reads never take the store's lock: they consult this process's
/// buffered writes, then read the manifest on a pool of read connections, beside
/// commits, checkpoints, trims and `verify` (see DiskReader). Writes and
/// maintenance are serialized on the store's lock. Async variants with the same
/// names run the work on a bounded pool of threads.
///
/// Durability: after `setValue` returns, the value is readable in this process.
/// It survives a crash of the process once its group commit is committed (within
/// `groupCommitDelay`) and a power loss after `flush()` returns. A crash or a
/// failed commit never leaves a torn value or a row without its bytes visible:
/// at most orphan files, which the sweep removes.
///
/// Keys are compared by their UTF-8 bytes: canonically equivalent spellings
/// such as "é" and "e\u{301}" are different keys (as SQLite compares TEXT).
///
/// One instance per directory per process (`KVCacheError.directoryInUse`);
/// several processes may share a directory.
public final class DiskCache: Sendable {
    /// The cache directory, as given.
    public let directory: URL
    /// The configuration the cache was opened with.
    public let configuration: Configuration

    let store: MutexBox<KVStorage>
    /// The read path: never takes `store`'s lock.
    let reader: DiskReader
    let path: String
    /// The data folder; its files are read outside the lock (see `value(forKey:)`).
    let files: FileStore
    /// The commit timer and access-time flushes: short work, never behind a sweep.
    let commitThread = BackgroundThread()
    /// The commit timer's view of the group commit's schedule (see GroupCommitter).
    let commitSchedule: CommitSchedule
    /// Sweeps, trash deletion, trims.
    let backgroundQueue: DispatchQueue
    /// Async variants: the process's bounded pool.
    let workPool: BlockingWorkPool
    let backgroundWork = DispatchGroup()
    /// Where tests pause slow work (see DiskTestHooks).
    let hooks: DiskTestHooks
    /// Told of each change made through this level's write methods (the ``Cache`` around it
    /// drops its memory copies, so a direct write to the disk level is safe); called on the
    /// writer's thread once the change is made, without this level's locks.
    let directChanges = MutexBox<(@Sendable (DirectChange) -> Void)?>(nil)
    #if Metrics
    /// Exports the statistics (package trait `Metrics`; see `Configuration.metricsLabel`).
    let metrics: DiskMetrics?
    /// What a ``Cache`` around this level exports with each report (its memory level and loads).
    let alsoReport = MutexBox<(@Sendable () -> Void)?>(nil)
    #endif
    /// Where failures that reach no caller go (see `Configuration.logger`).
    let diagnostics: Diagnostics

    /// Opens (creating if needed) the cache in `directory`. A corrupt manifest is
    /// moved aside and rebuilt; other failures throw without touching the cache.
    /// A directory that holds another application's database or files the cache
    /// did not create throws `KVCacheError.notACache` and is left as it is.
    /// With `configuration.isReadOnly` nothing is created or changed.
    public init(directory: URL, configuration: Configuration = .init()) throws {
        try configuration.validate()
        var options = configuration.storageOptions
        #if Metrics
        let metrics = configuration.metricsLabel.map {
            DiskMetrics(label: $0, factory: configuration.metricsFactory ?? MetricsSystem.factory)
        }
        if let metrics { options.recordCommit = { metrics.commitDuration.recordNanoseconds(Int64($0)) } }
        self.metrics = metrics
        #endif
        let storage: KVStorage
        do {
            storage = try KVStorage(directory: directory.path, options: options)
        } catch let error as SQLiteError {
            throw error.kvCacheError(path: directory.path + "/manifest.sqlite")
        }
        self.directory = directory
        self.configuration = configuration
        path = storage.directory
        files = storage.files
        hooks = storage.hooks
        diagnostics = configuration.diagnostics
        reader = DiskReader(buffer: storage.buffer, pool: storage.readers, files: storage.files,
                            options: storage.options)
        store = MutexBox(storage)
        commitSchedule = storage.groupCommitter.timer
        backgroundQueue = DispatchQueue(label: "KVCache.DiskCache.background", qos: .utility)
        workPool = .shared
        startBackgroundWorkAtOpen()
    }

    deinit { try? close() }

    /// Commits pending writes and access times and closes the store; later calls throw
    /// `.closed`. The store is closed even when this throws: the error is that of the
    /// final commit, whose writes are lost, or of an earlier commit that dropped
    /// writes and was not yet reported by `flush()`. Closing again does nothing.
    public func close() throws {
        #if Metrics
        defer { reportMetrics() }
        #endif
        do {
            try store.withLock { try $0.close() }
        } catch let error as SQLiteError {
            throw error.kvCacheError(path: reader.pool.path)
        }
    }

    #if Metrics
    /// Exports the statistics now (package trait `Metrics`; they are also exported every
    /// `Configuration.metricsInterval` and at close). Does nothing without a `metricsLabel`.
    public func reportMetrics() {
        guard let metrics else { return }
        metrics.report(statistics)
        alsoReport.load()?()
    }
    #endif

    // MARK: - Values

    /// The value stored for `key`, or nil if there is none or it expired.
    public func value(forKey key: String) throws -> Data? {
        try entry(forKey: key)?.data
    }

    /// `value(forKey:)` with the entry's expiration as it stands after this read
    /// (the facade promotes a disk hit into memory with it).
    func entry(forKey key: String) throws -> (data: Data, expiration: Expiration)? {
        try KVStorage.validate(key, options: reader.options)
        return try readRetryingChangedFiles { try readEntry(key, $0, &$1) }
    }

    /// Runs `attempt`, a read of one key, on the read path. A file value is read without any
    /// lock: its name is never reused and the file is deleted only after the commit that
    /// dropped its row. A read racing such a deletion finds no file and looks the key up
    /// again; after a few such races it reads under the store's lock, where no commit of this
    /// process deletes a file.
    func readRetryingChangedFiles<Found>(
        _ attempt: (DiskReader, inout DiskReader.FollowUps) throws -> ReadOutcome<Found>
    ) throws -> Found? {
        for round in 0..<4 {
            let outcome = round < 3
                ? try read { try attempt($0, &$1) }
                : try store.withLock { _ in try read(rebuildsCorrupt: false) { try attempt($0, &$1) } }
            switch outcome {
            case .found(let found): return found
            case .miss: return nil
            case .changed: continue
            }
        }
        // Changed again under the lock: another process replaced the value meanwhile.
        reader.buffer.withLock { $0.counters.misses += 1 }
        return nil
    }

    enum ReadOutcome<Found> {
        case found(Found)
        case miss
        /// The file of the value found was replaced or removed meanwhile.
        case changed
    }

    private func readEntry(_ key: String, _ reader: DiskReader,
                           _ followUps: inout DiskReader.FollowUps) throws -> ReadOutcome<(data: Data, expiration: Expiration)> {
        switch try reader.lookUp(forKey: key, followUps: &followUps) {
        case .value(let data, let expiration):
            return .found((data, expiration))
        case .miss:
            return .miss
        case .file(let name, let size, let expiration):
            let swaps = reader.buffer.dataFolderSwaps
            let result: FileStore.ReadResult
            do {
                result = try files.read(name, expectedSize: size)
            } catch {
                _ = reader.fileReadFailed(forKey: key, filename: name, error: error, seenSwaps: swaps,
                                          followUps: &followUps)
                throw error
            }
            if case .value(let data) = result { return .found((data, expiration)) }
            return reader.fileReadFailed(forKey: key, filename: name, seenSwaps: swaps, followUps: &followUps)
                ? .changed : .miss
        }
    }

    /// The value of `key` if it expired less than the fail-safe retention ago (see
    /// `Configuration.expiredRetention`), with its deadline; nil otherwise, or if its file
    /// went meanwhile. Records nothing: a read-only look.
    func expiredEntry(forKey key: String) throws -> (data: Data, deadline: Double)? {
        try KVStorage.validate(key, options: reader.options)
        guard let found = try read({ reader, _ in try reader.expiredLookUp(forKey: key) }) else { return nil }
        guard let filename = found.row.filename else { return (found.row.inline ?? Data(), found.deadline) }
        guard case .value(let data) = try files.read(filename, expectedSize: found.row.size) else { return nil }
        return (data, found.deadline)
    }

    /// Stores `data` for `key`, replacing any value, with an optional expiration and
    /// extended data (small metadata kept beside the value).
    public func setValue(_ data: Data, forKey key: String, expiration: Expiration = .never,
                         extendedData: Data? = nil) throws {
        try setValue(data, forKey: key, expiration: expiration, extendedData: extendedData, reportsChange: true)
    }

    /// The same, telling `directChanges` only if `reportsChange`: the ``Cache`` around this level
    /// passes false for its own writes, which keep its memory level in step already.
    @usableFromInline
    func setValue(_ data: Data, forKey key: String, expiration: Expiration, extendedData: Data?,
                  reportsChange: Bool) throws {
        try KVStorage.validate(extendedData: extendedData)
        // Inline values (the common small set) take the lock once.
        if let name = try writeFileWithoutLock(data, forKey: key) {
            try perform(needs: .roomToStage) {
                try $0.setValue(data, writtenTo: name, forKey: key, expiration: expiration,
                                extendedData: extendedData)
            }
        } else {
            try perform(needs: .roomToStage) {
                try $0.setValue(data, forKey: key, expiration: expiration, extendedData: extendedData)
            }
        }
        if reportsChange { reportDirectChange(.key(key)) }
    }

    /// A change made through a write method, as `directChanges` hears of it.
    enum DirectChange: Sendable, Equatable {
        case key(String)
        case prefix(String)
        case all
    }

    /// Tells the listener, if any, of `change`. The listener is read with `load()`: read
    /// through `withLock { $0 }` it was stored back wrapped in two more thunks each time
    /// (see `MutexBox`), a chain that grew with every report (issue 38).
    func reportDirectChange(_ change: DirectChange) {
        directChanges.load()?(change)
    }

    /// For a value stored in a file: writes it under a fresh name reserved for it, without
    /// the lock, so a large write does not hold up every other caller (no reader can
    /// resolve the name and no sweep deletes the file before its row), and returns the
    /// name, still reserved; nil for an inline value. Reserving changes nothing the
    /// follow-ups act on, so it skips them.
    private func writeFileWithoutLock(_ data: Data, forKey key: String) throws -> String? {
        guard configuration.storageMode.storesInFile(size: data.count, inlineThreshold: configuration.inlineThreshold)
        else { return nil }
        while true {
            guard let name = try store.withLock({ try $0.reserveFileName(forKey: key, size: data.count) }) else {
                return nil
            }
            let written: Bool
            do {
                written = try files.write(data, named: name, sync: configuration.syncsFiles)
            } catch {
                store.withLock { $0.releaseFileName(name) }
                throw error
            }
            if written { return name }
            // The name was taken (2^-64 odds): another one.
            store.withLock { $0.releaseFileName(name) }
        }
    }

    /// Gives `key`'s live value a new expiration, counted from now (as `setValue` counts
    /// it), and returns whether there was one. Commits on the commit connection; other
    /// callers go on meanwhile.
    @discardableResult
    public func touch(_ key: String, expiration: Expiration) throws -> Bool {
        try touch(key, expiration: expiration, reportsChange: true)
    }

    /// The same, telling `directChanges` only if `reportsChange`: the ``Cache`` around this level
    /// passes false for its own writes, which keep its memory level in step already.
    func touch(_ key: String, expiration: Expiration, reportsChange: Bool) throws -> Bool {
        try KVStorage.validate(key, options: reader.options)
        let touched = try performWork(freesSpace: false, prepare: { storage in
            try storage.requireWritable()
            let now = storage.options.clock()
            let deadline = expiration.deadline(from: now)
            let lifetime = expiration.extendableLifetime
            return { transaction in
                try transaction.database.statement(Manifest.updateExpiration).run { statement in
                    try statement.bind(key, at: 1)
                    try statement.bind(deadline, at: 2)
                    try statement.bind(lifetime, at: 3)
                    try statement.bind(now, at: 4)
                    try statement.execute()
                }
                return transaction.database.changes
            }
        }, finish: { _, _ in }) > 0
        if touched && reportsChange { reportDirectChange(.key(key)) }
        return touched
    }

    /// Stores `data` for `key` only if no live value is stored for it, and returns
    /// whether it did (python-diskcache's `add`). Atomic across every process sharing the
    /// directory: of concurrent callers, in any processes, exactly one stores the key. An
    /// expired value counts as absent and is replaced. When this returns true, the value
    /// is committed (not synced; see `flush`) and other processes see it.
    @discardableResult
    public func setValueIfAbsent(_ data: Data, forKey key: String, expiration: Expiration = .never,
                                 extendedData: Data? = nil) throws -> Bool {
        try setValueIfAbsent(data, forKey: key, expiration: expiration, extendedData: extendedData, reportsChange: true)
    }

    /// The same, telling `directChanges` only if `reportsChange`: the ``Cache`` around this level
    /// passes false for its own writes, which keep its memory level in step already.
    ///
    /// A live value this process can read (its own pending write, or a committed row)
    /// answers false without a write. Otherwise the check and the insert run in one write
    /// transaction on the commit connection, after this process's pending writes (see
    /// `KVStorage.setValueIfAbsentWork`): SQLite's write lock orders it with every
    /// process's commits. This call waits for that commit without the store's lock, as
    /// `setValues` does. A file value is written first, without the lock, and deleted if
    /// another caller stored the key.
    func setValueIfAbsent(_ data: Data, forKey key: String, expiration: Expiration, extendedData: Data?,
                          reportsChange: Bool) throws -> Bool {
        try KVStorage.validate(extendedData: extendedData)
        try KVStorage.validate(key, options: reader.options)
        if try read({ reader, _ in try reader.contains(key) }) { return false }
        // Reserved until the transaction has committed: the orphan sweep keeps the file meanwhile.
        let name = try writeFileWithoutLock(data, forKey: key)
        let value = KVStorage.BatchValue(key: key, size: data.count, filename: name, inline: name == nil ? data : nil)
        let outcome: KVStorage.AddOutcome
        do {
            let result = try performWork(freesSpace: false, prepare: { storage in
                try storage.requireWritable()
                return storage.setValueIfAbsentWork(value, expiration: expiration, extendedData: extendedData)
            }, finish: { storage, result in
                if let name { storage.releaseFileName(name) }
                guard let outcome = KVStorage.AddOutcome(rawValue: result), outcome != .present else { return }
                storage.buffer.withLock { $0.counters.sets += 1 }
            })
            outcome = KVStorage.AddOutcome(rawValue: result) ?? .present
        } catch {
            if let name {
                store.withLock { $0.releaseFileName(name) }
                files.remove(name)
            }
            throw error
        }
        guard outcome != .present else {
            // No row names it: the key was stored by another caller.
            if let name { files.remove(name) }
            return false
        }
        if reportsChange { reportDirectChange(.key(key)) }
        return true
    }

    /// Stores every value of `values` (replacing any) in one transaction, with one
    /// expiration: when this returns, all are committed (not synced; see `flush`). File
    /// values are written first, without the lock. If it throws, none was stored. Keys
    /// are checked first: one bad key stores nothing.
    public func setValues(_ values: [String: Data], expiration: Expiration = .never) throws {
        try setValues(values, expiration: expiration, reportsChange: true)
    }

    /// The same, telling `directChanges` only if `reportsChange`: the ``Cache`` around this level
    /// passes false for its own writes, which keep its memory level in step already.
    func setValues(_ values: [String: Data], expiration: Expiration, reportsChange: Bool) throws {
        guard !values.isEmpty else { return }
        for key in values.keys { try KVStorage.validate(key, options: reader.options) }
        var batch: [KVStorage.BatchValue] = []
        var reserved: [String] = []
        do {
            for (key, data) in values {
                // Reserved until the batch commits: the orphan sweep keeps the file meanwhile.
                let name = try writeFileWithoutLock(data, forKey: key)
                if let name { reserved.append(name) }
                batch.append(KVStorage.BatchValue(key: key, size: data.count, filename: name,
                                                  inline: name == nil ? data : nil))
            }
            try performWork(freesSpace: false, prepare: { storage in
                try storage.requireWritable()
                return storage.setValuesWork(batch, expiration: expiration)
            }, finish: { storage, count in
                storage.buffer.withLock { $0.counters.sets += count }
                for name in reserved { storage.releaseFileName(name) }
            })
            if reportsChange { for key in values.keys { reportDirectChange(.key(key)) } }
        } catch {
            let files = files
            store.withLock { storage in for name in reserved { storage.releaseFileName(name) } }
            for value in batch { if let name = value.filename { files.remove(name) } }
            throw error
        }
    }

    /// The values stored for `keys` (missing and expired keys are absent), each read as
    /// `value(forKey:)` reads it.
    public func values(forKeys keys: [String]) throws -> [String: Data] {
        var found: [String: Data] = [:]
        for key in keys where found[key] == nil {
            if let value = try value(forKey: key) { found[key] = value }
        }
        return found
    }

    /// Removes the value for `key`, if any.
    public func removeValue(forKey key: String) throws {
        try removeValue(forKey: key, reportsChange: true)
    }

    /// The same, telling `directChanges` only if `reportsChange`: the ``Cache`` around this level
    /// passes false for its own writes, which keep its memory level in step already.
    @usableFromInline
    func removeValue(forKey key: String, reportsChange: Bool) throws {
        try perform(needs: .roomToStage) { _ = try $0.removeValue(forKey: key) }
        if reportsChange { reportDirectChange(.key(key)) }
    }

    /// True if a live value is stored for `key`.
    public func contains(_ key: String) throws -> Bool {
        try KVStorage.validate(key, options: reader.options)
        return try read { reader, _ in try reader.contains(key) }
    }

    /// What is stored for `key` (size, inline or in a file, expiration), or nil if no
    /// value is stored or it has expired. Reads no value and records no access.
    public func info(forKey key: String) throws -> EntryInfo? {
        try KVStorage.validate(key, options: reader.options)
        return try read { reader, _ in try reader.info(forKey: key) }
    }

    /// The extended data stored with `key`'s value, or nil.
    public func extendedData(forKey key: String) throws -> Data? {
        try KVStorage.validate(key, options: reader.options)
        return try read { reader, _ in try reader.extendedData(forKey: key) }
    }

    /// Number of entries, pending writes included: a maintained summary (no scan), read
    /// on the read path (no commit, no wait for one).
    public var totalCount: Int {
        get throws { try read { reader, _ in try reader.totals() }.count }
    }

    /// Bytes of all values, pending writes included: a maintained summary (no scan), read
    /// on the read path (no commit, no wait for one).
    public var totalSize: Int64 {
        get throws { try read { reader, _ in try reader.totals() }.size }
    }

    /// Up to `limit` keys that start with `prefix` and sort after `after` (byte-wise
    /// UTF-8 order), skipping expired entries; pass the last key of a page to get the
    /// next one, nil for the first. The keys with a prefix are one range of the
    /// manifest's primary key: listing them reads no other row.
    public func keys(withPrefix prefix: String = "", after: String? = nil, limit: Int) throws -> [String] {
        try perform(needs: .committed) { try $0.keys(withPrefix: prefix, after: after, limit: limit) }
    }

    /// How far `flush(durability:)` takes the writes made so far.
    public enum Durability: Sendable, Hashable {
        /// Committed to the manifest: they survive a crash of this process (not a
        /// power loss). One commit, no checkpoint, no fsync.
        case committed
        /// Committed and synced to the disk: they also survive a power loss.
        case synced
    }

    /// Commits pending writes and access times; with `.synced` (the default) also
    /// makes them survive a power loss.
    public func flush(durability: Durability = .synced) throws {
        // The commit runs on the commit connection and is awaited without the lock, so a
        // commit that waits for another process's write lock holds up no other caller.
        // Twice: a batch already in flight first, then the writes made before this call.
        for _ in 0..<2 {
            let inFlight = try perform { storage -> DetachedCommit? in
                try storage.commitInBackground()
                return storage.batchInFlight()
            }
            guard let inFlight else { break }
            hooks.flushWillWait.run()
            _ = inFlight.waitUntilApplied()
        }
        // The checkpoint and the fsyncs run without the lock: writers go on meanwhile.
        guard let sync = try perform(needs: .committed, { try $0.flush(durability: durability) }) else { return }
        hooks.flushWillSync.run()
        if !sync.checkpoint() { try perform { try $0.checkpointOnStoreConnection() } }
        sync.sync()
    }

    // MARK: - Reads

    /// Runs `body` on the read path (no store lock), maps SQLite errors to
    /// `KVCacheError`, rebuilds a corrupt manifest under the store's lock (once for
    /// all the readers that saw it) and retries once, then schedules what the read
    /// left to do (access-time flushes, the commit of a queued removal).
    func read<Result>(rebuildsCorrupt: Bool = true,
                      _ body: (DiskReader, inout DiskReader.FollowUps) throws -> Result) throws -> Result {
        var followUps = DiskReader.FollowUps()
        defer { if !followUps.isEmpty { scheduleReadFollowUps(followUps) } }
        do {
            return try body(reader, &followUps)
        } catch let error as SQLiteError {
            throw error.kvCacheError(path: reader.pool.path)
        } catch let seen as ReadConnectionPool.CorruptionSeen {
            let path = reader.pool.path
            if configuration.isReadOnly { throw KVCacheError.corrupt(path: path, message: seen.error.message) }
            if !rebuildsCorrupt { throw seen.error.kvCacheError(path: path) }
            try perform { storage in
                if storage.readers.currentGeneration == seen.generation { try storage.rebuildAfterCorruption() }
            }
            do {
                return try body(reader, &followUps)
            } catch let error as SQLiteError {
                throw error.kvCacheError(path: path)
            } catch let again as ReadConnectionPool.CorruptionSeen {
                throw again.error.kvCacheError(path: path)
            }
        }
    }
}
