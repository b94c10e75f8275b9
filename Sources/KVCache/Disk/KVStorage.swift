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
/// pending writes that the group committer commits after a short delay, when the
/// buffer is full, or on `flush()` (see GroupCommitter); reads consult the buffer
/// first, so they see those writes at once.
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
    /// Pending writes, the batches being committed, access times and counters:
    /// what readers consult without the store's lock (see WriteBuffer).
    let buffer = WriteBuffer()
    /// Read-only connections for readers (see DiskReader).
    let readers: ReadConnectionPool
    /// When pending writes are committed, and the commit thread and connection (see GroupCommitter).
    let groupCommitter: GroupCommitter
    /// Random parts of new file names.
    var fileNameSuffixes = FileNameSuffixes()
    /// Names handed out for files being written outside the lock (see KVStorage+FileWrites.swift).
    var reservedFiles: Set<String> = []
    /// Data folders swapped out by removeAll (`swapDataFolder`), for the owner to delete.
    var trashFolders: [String] = []

    // Owner's scheduling state (guarded by the owner's lock like everything here).
    var isLimitTrimScheduled = false
    /// True while the reserve file is known to be in place at its full size.
    var isReserveInPlace = false
    /// Bytes of pending writes that start a commit: the configured most, or an eighth of the
    /// disk's free space when that is less (measured after each commit; see `commitIfFull`).
    var batchByteLimit: Int
    /// True once this store marked its manifest as ours (`PRAGMA application_id`): it
    /// created the schema, or adopted a manifest from before the mark.
    var markedManifest = false
    /// Set when a rebuild left unreferenced files behind.
    var needsOrphanSweep = false
    /// Why acknowledged writes were dropped (a commit failed for good: disk full, I/O),
    /// for the next `setValue`/`removeValue` to throw; nil once reported.
    var droppedWritesError: Error?
    /// The same, for the next `flush()`: it must not report success after a loss.
    var flushError: Error?
    /// Where tests pause slow work (see DiskTestHooks).
    let hooks = DiskTestHooks()
    /// Reports removed entries to `onEviction`, if set.
    let evictionReporter: EvictionReporter?
    /// Set by the owner around calls that may be handed a ticket to wait on without the
    /// lock (see `ticket(for:)`).
    var waitsOffLock = false
    /// True from a successful registration in `DirectoryRegistry` until close.
    /// (A failed init still runs deinit: it must not release another store's claim.)
    private var holdsDirectory = false

    /// Opens the store in `directory`, creating it (mode 0700) if needed.
    /// Throws `directoryInUse` if this process already has it open, and `notACache`
    /// if the directory holds what a store did not create. Read-only, it creates
    /// nothing: the directory and its manifest must exist.
    init(directory: String, options: Options) throws {
        evictionReporter = options.onEviction.map(EvictionReporter.init)
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
        batchByteLimit = Self.batchByteLimit(options: options, freeSpace: FileStore.freeSpace(at: canonical))
        manifestPath = canonical + "/manifest.sqlite"
        dataPath = canonical + "/data"
        trashPath = canonical + "/trash"
        corruptPath = canonical + "/corrupt"
        reservePath = canonical + "/" + Self.reserveFileName
        self.options = options
        files = FileStore(directory: dataPath)
        groupCommitter = GroupCommitter(delay: options.groupCommitDelay,
                                        extendsExpirationOnAccess: options.extendsExpirationOnAccess)
        groupCommitter.recordCommit = options.recordCommit
        readers = ReadConnectionPool(path: manifestPath, capacity: options.readConnections,
                                     busyTimeout: options.busyTimeout)
        guard DirectoryRegistry.shared.register(canonical) else {
            throw KVCacheError.directoryInUse(path: canonical)
        }
        holdsDirectory = true
        do {
            // Other processes' opens wait meanwhile, so a new store is created once (OpenLock).
            let openLock = try OpenLock(directory: canonical, exclusive: !options.readOnly,
                                        timeout: options.busyTimeout)
            defer { openLock.release() }
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
            try? close()  // the manifest, if it opened, and the directory's registration
            throw error
        }
    }

    deinit { try? close() }

    /// Commits pending writes and access times, closes SQLite, releases the directory.
    /// Throws (after closing) the error of a final commit that failed, whose writes
    /// are lost, or of an earlier one that dropped writes not yet reported.
    func close() throws {
        var lost: Error?
        if let database {
            closeCommitter()
            // Access times and the conditional removals reads queue are housekeeping:
            // losing them loses no write of the caller's.
            let holdsWrites = buffer.withLock { $0.pending.hasCallerWrites }
            do {
                try commit()
            } catch where holdsWrites {
                lost = error
            } catch {}
            if lost == nil, let error = droppedWritesError ?? flushError { lost = error }
            droppedWritesError = nil
            flushError = nil
            dropPendingWrites()
            statements = nil
            readers.close()
            checkpointer?.close()
            database.close()
            self.database = nil
        }
        if holdsDirectory {
            holdsDirectory = false
            DirectoryRegistry.shared.unregister(directory)
        }
        if let lost { throw lost }
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
        try Self.validate(key, options: options)
    }

    static func validate(_ key: String, options: Options) throws {
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

    // MARK: - Metadata

    /// The entry's metadata as this process sees it (pending writes first).
    func metadata(forKey key: String) throws -> ManifestRow? {
        if let write = latestWrite(forKey: key) { return write.value }
        return try storedMetadata(forKey: key)
    }

    /// The committed row's metadata (inside a transaction: the current row).
    func storedMetadata(forKey key: String) throws -> ManifestRow? {
        try ManifestBatch(database: requireDatabase(), statements: requireStatements()).metadata(forKey: key)
    }

    // MARK: - Writes

    /// Stores inline `data` for `key` as a pending write, readable at once; its row comes
    /// with the commit. File values are written outside the lock first, then recorded by
    /// `setValue(_:writtenTo:forKey:expiration:extendedData:)` (KVStorage+FileWrites.swift).
    func setValue(_ data: Data, forKey key: String, expiration: Expiration = .never,
                  extendedData: Data? = nil) throws {
        try validate(key)
        try Self.validate(extendedData: extendedData)
        _ = try requireDatabase()
        try requireWritable()
        try throwDroppedWritesError()
        precondition(!storesInFile(size: data.count), "a file value is written before the lock, then recorded")
        try commitIfFull()
        record(size: data.count, filename: nil, inline: data, forKey: key,
               expiration: expiration, extendedData: extendedData)
    }

    /// Records a set as a pending write (its file, if any, is complete).
    func record(size: Int, filename: String?, inline: Data?, forKey key: String, expiration: Expiration,
                extendedData: Data?) {
        let now = options.clock()
        let lifetime = expiration.extendableLifetime
        // One lock hold: readers see the set and its bookkeeping together.
        let replaced = buffer.withLock { state -> String? in
            let row = ManifestRow(filename: filename, inline: inline, size: Int64(size),
                                  accessed: state.stamp(now), deadline: expiration.deadline(from: now),
                                  lifetime: lifetime, extendedData: extendedData)
            return state.stage(.set(row), forKey: key)
        }
        if let replaced { files.remove(replaced) }
    }

    /// True when the store holds more than its count or size limit.
    func exceeds(countLimit: Int, sizeLimit: Int64) -> Bool {
        buffer.withLock { $0.exceeds(countLimit: countLimit, sizeLimit: sizeLimit) }
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
        let replaced = buffer.withLock { $0.stage(.remove, forKey: key) }
        if let replaced { files.remove(replaced) }
        return true
    }
}
