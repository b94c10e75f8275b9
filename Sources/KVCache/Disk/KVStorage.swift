import Foundation

/// The disk store of one directory: a SQLite manifest plus a data folder.
///
/// ```
/// <directory>/manifest.sqlite (-wal, -shm)   the manifest (see `Manifest`)
/// <directory>/data/<hash>-<random>           one file per file value
/// <directory>/trash/                         data folders being deleted by removeAll
/// <directory>/corrupt/                       the last database moved aside as corrupt
/// <directory>/reserve                         space kept back for deletions on a full disk
/// ```
///
/// Not thread-safe: `DiskCache` serializes every call. Writes are buffered as
/// pending writes (group commit, see KVStorage+Commit.swift) that the owner
/// commits after a short delay, when the buffer is full, or on `flush()`; reads
/// consult the buffer first, so they see those writes at once.
final class KVStorage {
    let directory: String
    let manifestPath: String
    let dataPath: String
    let trashPath: String
    let corruptPath: String
    /// A file of zeros the store keeps so that a full disk can still shrink: it is
    /// deleted when a removal, trim or removeAll cannot commit for lack of space,
    /// and made again once space allows (see KVStorage+Space.swift).
    let reservePath: String
    /// The reserve's name in the cache directory (a fixed name: the cache's own file).
    static let reserveFileName = "reserve"
    let options: Options
    let files: FileStore

    /// Nil once closed.
    var database: Database?
    /// The hot statements of `database` (nil with it).
    var statements: ManifestStatements?
    /// Checkpoints `database`'s WAL in the background (replaced with it).
    var checkpointer: WALCheckpointer?
    /// Writes not yet committed (group commit).
    var pending = PendingWrites()
    /// The batch being committed on `committer`, outside the owner's lock.
    var detached: DetachedCommit?
    /// The second connection, for detached commits (opened with `database`; nil if it could not be).
    var committer: CommitConnection?
    /// Runs a detached batch off the lock; set by the owner. Nil: commits stay
    /// on the store's connection, under the caller's lock.
    var startDetachedCommit: ((DetachedCommit, CommitConnection) -> Void)?
    /// The open write transaction, if any (only inside `write(_:)`).
    var transaction: Transaction?
    var accessTimes = AccessTimeBuffer()
    /// Random parts of new file names.
    var fileNameSuffixes = FileNameSuffixes()
    /// Names handed out for files being written outside the lock (see KVStorage+FileWrites.swift).
    var reservedFiles: Set<String> = []
    /// Counts the data folder swaps of removeAll: a file written outside the lock
    /// across one went to the trash with the old folder.
    var dataFolderGeneration = 0
    /// The latest modification or access time recorded (see `stamp(_:)`).
    var latestStamp = -Double.infinity
    /// Totals as of the last commit or stats read (pending writes not included).
    var committedTotals = Totals.zero
    var counters = Counters()

    // Owner's scheduling state (guarded by the owner's lock like everything here).
    /// When the pending writes must be handed to a group commit, on `Condition.now()`'s
    /// clock; nil while there are none.
    var commitDeadline: Double?
    /// True once the commit schedule has been told there is nothing to do.
    var isCommitScheduleIdle = true
    var isAccessFlushScheduled = false
    var isUrgentAccessFlushScheduled = false
    var isLimitTrimScheduled = false
    /// True while the reserve file is known to be in place at its full size.
    var isReserveInPlace = false
    /// Set when a rebuild left unreferenced files behind.
    var needsOrphanSweep = false
    /// Why acknowledged writes were dropped (a commit failed for good: disk full, I/O),
    /// for the next `setValue`/`removeValue` to throw; nil once reported.
    var droppedWritesError: Error?
    /// The same, for the next `flush()`: it must not report success after a loss.
    var flushError: Error?
    /// True from a successful registration in `DirectoryRegistry` until close.
    /// (A failed init still runs deinit: it must not release another store's claim.)
    private var holdsDirectory = false

    /// Opens the store in `directory`, creating it (mode 0700) if needed.
    /// Throws `directoryInUse` if this process already has it open, and `notACache`
    /// if the directory holds what a store did not create. Read-only, it creates
    /// nothing: the directory and its manifest must exist.
    init(directory: String, options: Options) throws {
        if options.readOnly {
            var info = stat()
            guard stat(directory, &info) == 0 else { throw KVCacheError.directoryUnavailable(path: directory, errno: errno) }
        } else {
            try FileStore.createDirectory(directory)
        }
        guard let resolved = realpath(directory, nil) else {
            throw KVCacheError.directoryUnavailable(path: directory, errno: errno)
        }
        let canonical = String(cString: resolved)
        free(resolved)
        self.directory = canonical
        manifestPath = canonical + "/manifest.sqlite"
        dataPath = canonical + "/data"
        trashPath = canonical + "/trash"
        corruptPath = canonical + "/corrupt"
        reservePath = canonical + "/" + Self.reserveFileName
        self.options = options
        files = FileStore(directory: dataPath)
        guard DirectoryRegistry.shared.register(canonical) else {
            throw KVCacheError.directoryInUse(path: canonical)
        }
        holdsDirectory = true
        do {
            // Before anything is created: a directory that is not ours is left as it is.
            if try !StoreOwnership.manifestExists(at: manifestPath) {
                if options.readOnly { throw KVCacheError.directoryUnavailable(path: manifestPath, errno: ENOENT) }
                try StoreOwnership.requireOnlyStoreEntries(in: canonical)
            }
            do {
                database = try openManifest()
            } catch let error as SQLiteError where error.isDiskFull && !options.readOnly
                        && FileStore.releaseReserve(reservePath) {
                // A disk the cache filled: its reserve makes room for SQLite's files (-shm, -wal).
                database = try openManifest()
            }
            // After the manifest is known to be ours.
            if !options.readOnly {
                try FileStore.createSubfolder(dataPath)
                try FileStore.createSubfolder(trashPath)
                ensureReserve()
            }
        } catch {
            close()  // the manifest, if it opened, and the directory's registration
            throw error
        }
    }

    deinit { close() }

    /// Commits pending writes and access times, closes SQLite, releases the directory.
    func close() {
        if let database {
            closeCommitter()
            try? commit()
            dropPendingWrites()
            statements = nil
            checkpointer?.close()
            database.close()
            self.database = nil
        }
        if holdsDirectory {
            holdsDirectory = false
            DirectoryRegistry.shared.unregister(directory)
        }
    }

    var isClosed: Bool { database == nil }

    func requireDatabase() throws -> Database {
        guard let database else { throw KVCacheError.closed }
        return database
    }

    /// Throws `readOnly` for a call that would change a store opened read-only.
    func requireWritable() throws {
        if options.readOnly { throw KVCacheError.readOnly(path: directory) }
    }

    func requireStatements() throws -> ManifestStatements {
        guard let statements else { throw KVCacheError.closed }
        return statements
    }

    func validate(_ key: String) throws {
        if key.isEmpty { throw KVCacheError.invalidKey(reason: "the key is empty") }
        // A quarter of SQLite's length limit each for the key and the extended data
        // leaves the row room for an inline value (see StorageMode.maxInlineSize).
        let limit = min(options.maxKeyLength, Database.lengthLimit / 4)
        if key.utf8.count > limit {
            throw KVCacheError.invalidKey(reason: "the key is longer than \(limit) UTF-8 bytes")
        }
    }

    /// Throws for extended data too large to share a row with the key and value.
    static func validate(extendedData: Data?) throws {
        if let extendedData, extendedData.count > Database.lengthLimit / 4 {
            throw KVCacheError.invalidArgument(
                "extended data of \(extendedData.count) bytes is over the limit of \(Database.lengthLimit / 4)")
        }
    }

    func storesInFile(size: Int) -> Bool {
        options.mode.storesInFile(size: size, inlineThreshold: options.inlineThreshold)
    }

    /// True if the entry's deadline, extended by a buffered access if configured, has passed.
    func isExpired(key: String, expiration: Double?, lifetime: Double?, now: Double) -> Bool {
        guard var deadline = expiration else { return false }
        if options.extendsExpirationOnAccess, let lifetime, let accessed = bufferedAccessTime(forKey: key) {
            deadline = max(deadline, accessed + lifetime)
        }
        return deadline <= now
    }

    // MARK: - Reads

    /// What a read finds under the lock.
    enum Lookup {
        /// An inline value, with its expiration as it stands after this read.
        case value(Data, Expiration)
        /// No value: absent or expired.
        case miss
        /// A file value, to be read from `files` (the hit and the access are already recorded).
        case file(name: String, size: Int64, Expiration)
    }

    /// `value(forKey:)` with the entry's expiration as it stands after this read,
    /// so a copy promoted into memory expires with it.
    func entry(forKey key: String) throws -> (data: Data, expiration: Expiration)? {
        switch try lookUp(forKey: key) {
        case .value(let data, let expiration): return (data, expiration)
        case .miss: return nil
        case .file(let name, let size, let expiration):
            do {
                if case .value(let data) = try files.read(name, expectedSize: size) { return (data, expiration) }
            } catch {
                fileReadFailed(forKey: key, filename: name, error: error)
                throw error
            }
            // Another process may have replaced the value meanwhile: then this read is a miss.
            if fileReadFailed(forKey: key, filename: name) { counters.misses += 1 }
            return nil
        }
    }

    /// Looks `key` up in the pending writes, then the manifest. Records the access in
    /// the buffer and counts the hit, including for a file value, whose file the
    /// caller reads (`DiskCache` does so outside its lock: file names are never
    /// reused and a file is deleted only after the commit that dropped its row, so a
    /// read racing that deletion finds no file, never other bytes; see `fileReadFailed`).
    func lookUp(forKey key: String) throws -> Lookup {
        try validate(key)
        let statements = try requireStatements()
        let now = options.clock()
        let row: StoredValue?
        var isPending = false
        if let write = latestWrite(forKey: key) {
            guard let value = write.value else { return miss() }
            row = StoredValue(filename: value.filename, size: value.size, expiration: value.deadline,
                              lifetime: value.lifetime, inline: value.inline, accessed: value.time)
            isPending = true
        } else {
            row = try statements.selectValue.run { statement in try statement.withBorrowedText(key, at: 1) {
                guard try statement.step() else { return nil }
                let filename = statement.string(at: 0)
                return StoredValue(filename: filename, size: statement.int64(at: 1),
                                   expiration: statement.optionalDouble(at: 2), lifetime: statement.optionalDouble(at: 3),
                                   inline: filename == nil ? statement.data(at: 5) : nil, accessed: statement.double(at: 4))
            } }
        }
        guard let row else { return miss() }
        if row.filename == nil, Int64(row.inline?.count ?? -1) != row.size {
            // A damaged row (its inline data is not the recorded size): never return
            // those bytes. `verify` reports it and `verify(repair: true)` removes it.
            counters.brokenRows += 1
            return miss()
        }
        if isExpired(key: key, expiration: row.expiration, lifetime: row.lifetime, now: now) {
            if options.readOnly { return miss() }
            if isPending {
                // The latest write has expired: the key is gone, whatever an older row holds.
                if let replaced = pending.record(.remove, forKey: key) { files.remove(replaced) }
                counters.evictions[.expired, default: 0] += 1
            } else {
                _ = pending.record(.removeIfExpired(now: now), forKey: key)
            }
            accessTimes.remove(key)
            return miss()
        }
        // Access times have a resolution: a read within it of the stored time writes
        // nothing, so hot keys cost no UPDATE at all (LRU order is kept to that resolution).
        let stamp = stamp(now)
        if !options.readOnly, stamp - row.accessed >= options.accessTimeResolution
            || (options.extendsExpirationOnAccess && row.lifetime != nil) {
            accessTimes.record(key, at: stamp)
        }
        counters.hits += 1
        let expiration = expirationAfterRead(deadline: row.expiration, lifetime: row.lifetime)
        if let filename = row.filename { return .file(name: filename, size: row.size, expiration) }
        return .value(row.inline ?? Data(), expiration)
    }

    /// An entry's expiration as a read leaves it: extended from now when reads extend it.
    private func expirationAfterRead(deadline: Double?, lifetime: Double?) -> Expiration {
        guard let deadline else { return .never }
        if options.extendsExpirationOnAccess, let lifetime { return .seconds(lifetime) }
        return .date(Date(timeIntervalSince1970: deadline))
    }

    /// Undoes what `lookUp` recorded for a file value whose read failed. A read
    /// error (`error`) only takes back the hit. A missing or wrong-size file is
    /// a miss: if the key still names that file the row is broken and its
    /// conditional removal is queued, and the result is false; if the key has
    /// changed meanwhile (the file was replaced or removed by a commit after the
    /// lookup), the result is true: the caller looks it up again.
    @discardableResult
    func fileReadFailed(forKey key: String, filename: String, error: Error? = nil) -> Bool {
        counters.hits -= 1
        if error != nil { return false }
        let current: String?
        if let write = latestWrite(forKey: key) {
            current = write.value?.filename
        } else {
            current = (try? storedMetadata(forKey: key))?.filename
        }
        guard current == filename else { return true }
        counters.brokenRows += 1
        counters.misses += 1
        if options.readOnly { return false }
        if let replaced = pending.record(.removeIfFile(filename), forKey: key) { files.remove(replaced) }
        accessTimes.remove(key)
        return false
    }

    /// The time to record as a modification or access: the clock, but never earlier
    /// than a time already recorded. If the wall clock jumps backwards, entries touched
    /// after the jump still count as newer than those touched before it, so LRU trims
    /// keep evicting the least recently used. (Expiration deadlines stay on the wall clock.)
    func stamp(_ now: Double) -> Double {
        if now > latestStamp { latestStamp = now }
        return latestStamp
    }

    private func miss() -> Lookup {
        counters.misses += 1
        return .miss
    }

    /// True if a value for `key` is stored and not expired (the file is not opened).
    func contains(_ key: String) throws -> Bool {
        try validate(key)
        guard let metadata = try metadata(forKey: key) else { return false }
        return !isExpired(key: key, expiration: metadata.expiration, lifetime: metadata.lifetime,
                          now: options.clock())
    }

    /// The extended data stored with `key`'s value, or nil.
    func extendedData(forKey key: String) throws -> Data? {
        try validate(key)
        let database = try requireDatabase()
        let now = options.clock()
        if let write = latestWrite(forKey: key) {
            guard let value = write.value,
                  !isExpired(key: key, expiration: value.deadline, lifetime: value.lifetime, now: now) else { return nil }
            return value.extendedData
        }
        return try database.statement(Manifest.selectExtendedData).run { statement in
            try statement.bind(key, at: 1)
            guard try statement.step() else { return nil }
            if isExpired(key: key, expiration: statement.optionalDouble(at: 1),
                         lifetime: statement.optionalDouble(at: 2), now: now) { return nil }
            return statement.data(at: 0)
        }
    }

    /// A value as a read finds it: a committed row or a pending write.
    struct StoredValue {
        var filename: String?
        var size: Int64
        var expiration: Double?
        var lifetime: Double?
        var inline: Data?
        var accessed: Double
    }

    struct Metadata {
        var filename: String?
        var size: Int64
        var expiration: Double?
        var lifetime: Double?
    }

    /// The entry's metadata as this process sees it (pending writes first).
    func metadata(forKey key: String) throws -> Metadata? {
        if let write = latestWrite(forKey: key) {
            guard let value = write.value else { return nil }
            return Metadata(filename: value.filename, size: value.size, expiration: value.deadline, lifetime: value.lifetime)
        }
        return try storedMetadata(forKey: key)
    }

    /// The committed row's metadata (inside a transaction: the current row).
    func storedMetadata(forKey key: String) throws -> Metadata? {
        try ManifestBatch(database: requireDatabase(), statements: requireStatements()).metadata(forKey: key)
    }

    // MARK: - Writes

    /// Stores `data` for `key` as a pending write, readable at once. A file value
    /// is written in full under a fresh name now; its row comes with the commit.
    func setValue(_ data: Data, forKey key: String, expiration: Expiration = .never,
                  extendedData: Data? = nil) throws {
        try validate(key)
        try Self.validate(extendedData: extendedData)
        _ = try requireDatabase()
        try requireWritable()
        try throwDroppedWritesError()
        try commitIfFull()
        let isFile = storesInFile(size: data.count)
        let filename = isFile ? try files.write(data, forKey: key, sync: options.syncsFiles, suffixes: &fileNameSuffixes) : nil
        record(size: data.count, filename: filename, inline: isFile ? nil : data, forKey: key,
               expiration: expiration, extendedData: extendedData)
    }

    /// Records a set as a pending write (its file, if any, is complete).
    func record(size: Int, filename: String?, inline: Data?, forKey key: String, expiration: Expiration,
                extendedData: Data?) {
        let now = options.clock()
        let lifetime = expiration.extendableLifetime
        let value = PendingWrites.Value(filename: filename, inline: inline, size: Int64(size),
                                        time: stamp(now), deadline: expiration.deadline(from: now), lifetime: lifetime,
                                        extendedData: extendedData)
        if let replaced = pending.record(.set(value), forKey: key) { files.remove(replaced) }
        accessTimes.remove(key)
        counters.sets += 1
    }

    /// Removes `key`; false if it was not stored.
    @discardableResult
    func removeValue(forKey key: String) throws -> Bool {
        try validate(key)
        _ = try requireDatabase()
        try requireWritable()
        try throwDroppedWritesError()
        guard try metadata(forKey: key) != nil else { return false }
        try commitIfFull()
        if let replaced = pending.record(.remove, forKey: key) { files.remove(replaced) }
        accessTimes.remove(key)
        counters.removals += 1
        return true
    }
}
