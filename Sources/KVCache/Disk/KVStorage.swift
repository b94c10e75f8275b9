import Foundation

/// The disk store of one directory: a SQLite manifest plus a data folder.
///
/// ```
/// <directory>/manifest.sqlite (-wal, -shm)   the manifest (see `Manifest`)
/// <directory>/data/<hash>-<random>           one file per file value
/// <directory>/trash/                         data folders being deleted by removeAll
/// <directory>/corrupt/                       the last database moved aside as corrupt
/// ```
///
/// Not thread-safe: `DiskCache` serializes every call. Writes go into an open
/// transaction (a group commit, see KVStorage+Batch.swift) that the owner commits
/// after a short delay, when it is full, or on `flush()`; reads use the same
/// connection, so they see those writes at once.
final class KVStorage {
    let directory: String
    let manifestPath: String
    let dataPath: String
    let trashPath: String
    let corruptPath: String
    let options: Options
    let files: FileStore

    /// Nil once closed.
    var database: Database?
    /// The open group-commit transaction, if any.
    var batch: Batch?
    var accessTimes = AccessTimeBuffer()
    /// Totals as of the last commit (or stats read); the batch's delta comes on top.
    var committedTotals = Totals.zero
    var counters = Counters()

    // Owner's scheduling flags (guarded by the owner's lock like everything here).
    var isCommitScheduled = false
    var isAccessFlushScheduled = false
    var isUrgentAccessFlushScheduled = false
    var isLimitTrimScheduled = false
    /// Set when a rebuild left unreferenced files behind.
    var needsOrphanSweep = false
    /// A background group commit that failed; the next `flush()` throws it.
    var deferredError: Error?
    /// True from a successful registration in `DirectoryRegistry` until close.
    /// (A failed init still runs deinit: it must not release another store's claim.)
    private var holdsDirectory = false

    /// Opens the store in `directory`, creating it (mode 0700) if needed.
    /// Throws `directoryInUse` if this process already has it open.
    init(directory: String, options: Options) throws {
        try FileStore.createDirectory(directory)
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
        self.options = options
        files = FileStore(directory: dataPath)
        guard DirectoryRegistry.shared.register(canonical) else {
            throw KVCacheError.directoryInUse(path: canonical)
        }
        holdsDirectory = true
        do {
            try FileStore.createDirectory(dataPath)
            try FileStore.createDirectory(trashPath)
            database = try openManifest()
        } catch {
            holdsDirectory = false
            DirectoryRegistry.shared.unregister(canonical)
            throw error
        }
    }

    deinit { close() }

    /// Commits pending writes and access times, closes SQLite, releases the directory.
    func close() {
        if let database {
            do {
                if !accessTimes.isEmpty { try beginBatchIfNeeded() }
                try commit()
            } catch {
                rollbackBatch()
            }
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

    func validate(_ key: String) throws {
        if key.isEmpty { throw KVCacheError.invalidKey(reason: "the key is empty") }
        if key.utf8.count > options.maxKeyLength {
            throw KVCacheError.invalidKey(reason: "the key is longer than \(options.maxKeyLength) UTF-8 bytes")
        }
    }

    func storesInFile(size: Int) -> Bool {
        switch options.mode {
        case .inline: return false
        case .file: return true
        case .mixed: return size >= options.inlineThreshold
        }
    }

    /// True if the entry's deadline, extended by a buffered access if configured, has passed.
    func isExpired(key: String, expiration: Double?, lifetime: Double?, now: Double) -> Bool {
        guard var deadline = expiration else { return false }
        if options.extendsExpirationOnAccess, let lifetime, let accessed = accessTimes.time(for: key) {
            deadline = max(deadline, accessed + lifetime)
        }
        return deadline <= now
    }

    // MARK: - Reads

    /// The value for `key`, or nil if absent, expired, or its file is missing or
    /// of the wrong size (such a row is removed). Records the access in the buffer.
    func value(forKey key: String) throws -> Data? {
        try validate(key)
        let database = try requireDatabase()
        let now = options.clock()
        typealias Row = (filename: String?, size: Int64, expiration: Double?, lifetime: Double?, inline: Data?)
        let row: Row? = try database.statement(Manifest.selectValue).run { statement in
            statement.bind(key, at: 1)
            guard try statement.step() else { return nil }
            let filename = statement.string(at: 0)
            return (filename, statement.int64(at: 1), statement.optionalDouble(at: 2),
                    statement.optionalDouble(at: 3), filename == nil ? statement.data(at: 5) : nil)
        }
        guard let row else {
            counters.misses += 1
            return nil
        }
        if isExpired(key: key, expiration: row.expiration, lifetime: row.lifetime, now: now) {
            counters.misses += 1
            // Best effort: the periodic trim removes it otherwise.
            _ = try? removeRow(key: key, filename: row.filename, size: row.size, reason: .expired)
            return nil
        }
        let data: Data
        if let filename = row.filename {
            switch try files.read(filename, expectedSize: row.size) {
            case .value(let bytes):
                data = bytes
            case .missing, .wrongSize:
                counters.misses += 1
                counters.brokenRows += 1
                _ = try? removeRow(key: key, filename: filename, size: row.size, reason: nil, onlyIfSameFile: true)
                return nil
            }
        } else {
            data = row.inline ?? Data()
        }
        accessTimes.record(key, at: now)
        counters.hits += 1
        return data
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
        return try database.statement(Manifest.selectExtendedData).run { statement in
            statement.bind(key, at: 1)
            guard try statement.step() else { return nil }
            if isExpired(key: key, expiration: statement.optionalDouble(at: 1),
                         lifetime: statement.optionalDouble(at: 2), now: now) { return nil }
            return statement.data(at: 0)
        }
    }

    struct Metadata {
        var filename: String?
        var size: Int64
        var expiration: Double?
        var lifetime: Double?
    }

    func metadata(forKey key: String) throws -> Metadata? {
        try requireDatabase().statement(Manifest.selectMetadata).run { statement in
            statement.bind(key, at: 1)
            guard try statement.step() else { return nil }
            return Metadata(filename: statement.string(at: 0), size: statement.int64(at: 1),
                            expiration: statement.optionalDouble(at: 2), lifetime: statement.optionalDouble(at: 3))
        }
    }

    // MARK: - Writes

    /// Stores `data` for `key` in the open batch. A file value is written in full
    /// under a fresh name before its row exists; the replaced file is deleted after commit.
    func setValue(_ data: Data, forKey key: String, expiration: Expiration = .never,
                  extendedData: Data? = nil) throws {
        try validate(key)
        let database = try requireDatabase()
        let now = options.clock()
        var lifetime: Double?
        if case .seconds(let seconds) = expiration { lifetime = max(0, seconds) }
        let isFile = storesInFile(size: data.count)
        let filename = isFile ? try files.write(data, forKey: key, sync: options.syncsFiles) : nil
        do {
            try inBatch {
                let old = try metadata(forKey: key)
                try database.statement(Manifest.upsert).run { statement in
                    statement.bind(key, at: 1)
                    statement.bind(filename, at: 2)
                    statement.bind(Int64(data.count), at: 3)
                    statement.bind(now, at: 4)
                    statement.bind(expiration.deadline(from: now), at: 5)
                    statement.bind(lifetime, at: 6)
                    statement.bind(extendedData, at: 7)
                    statement.bind(isFile ? nil : data, at: 8)
                    try statement.execute()
                }
                if let old {
                    batch!.delta.add(size: old.size, isFile: old.filename != nil, sign: -1)
                    if let oldFile = old.filename { batch!.obsoleteFiles.append(oldFile) }
                    counters.evictions[.replaced, default: 0] += 1
                }
                if let filename { batch!.newFiles.append(filename) }
                batch!.delta.add(size: Int64(data.count), isFile: isFile)
                batch!.writes += 1
                batch!.bytes += (isFile ? 0 : data.count) + (extendedData?.count ?? 0)
            }
        } catch {
            if let filename { files.remove(filename) }
            throw error
        }
        accessTimes.remove(key)
        counters.sets += 1
        try commitIfFull()
    }

    /// Removes `key`; false if it was not stored.
    @discardableResult
    func removeValue(forKey key: String) throws -> Bool {
        try validate(key)
        accessTimes.remove(key)
        // Outside a batch, look first: removing an absent key must not take the write lock.
        if batch == nil, try metadata(forKey: key) == nil { return false }
        let removed = try inBatch { () throws -> Bool in
            guard let old = try metadata(forKey: key) else { return false }
            return try deleteRow(key: key, filename: old.filename, size: old.size)
        }
        if removed { counters.removals += 1 }
        try commitIfFull()
        return removed
    }

    /// Deletes a row in the batch; `reason` counts it as an eviction.
    func removeRow(key: String, filename: String?, size: Int64, reason: EvictionReason?,
                   onlyIfSameFile: Bool = false) throws -> Bool {
        let removed = try inBatch {
            try deleteRow(key: key, filename: filename, size: size, onlyIfSameFile: onlyIfSameFile)
        }
        if removed, let reason { counters.evictions[reason, default: 0] += 1 }
        accessTimes.remove(key)
        return removed
    }

    /// Deletes the row of `key` inside the open batch and schedules its file for deletion.
    func deleteRow(key: String, filename: String?, size: Int64, onlyIfSameFile: Bool = false) throws -> Bool {
        let database = try requireDatabase()
        let sql = onlyIfSameFile && filename != nil ? Manifest.deleteKeyWithFile : Manifest.deleteKey
        try database.statement(sql).run { statement in
            statement.bind(key, at: 1)
            if onlyIfSameFile, let filename { statement.bind(filename, at: 2) }
            try statement.execute()
        }
        guard database.changes > 0 else { return false }
        batch!.delta.add(size: size, isFile: filename != nil, sign: -1)
        if let filename { batch!.obsoleteFiles.append(filename) }
        batch!.writes += 1
        return true
    }
}
