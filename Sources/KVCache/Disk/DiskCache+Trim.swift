import Foundation

extension DiskCache {
    /// Removes least recently used entries until at most `count` remain; returns how many went.
    /// A negative count throws `KVCacheError.invalidArgument` (as do the other trims' negative
    /// arguments) and removes nothing.
    @discardableResult
    public func trim(toCount count: Int) throws -> Int {
        try Validation.check(count >= 0, "trim(toCount:) needs a count of at least 0, not \(count)")
        return try runTrim(.count(count), reason: .count)
    }

    /// Removes least recently used entries until the values total at most `size` bytes.
    @discardableResult
    public func trim(toSize size: Int64) throws -> Int {
        try Validation.check(size >= 0, "trim(toSize:) needs a size of at least 0, not \(size)")
        return try runTrim(.size(size), reason: .cost)
    }

    /// Removes entries not accessed for longer than `age`.
    @discardableResult
    public func trim(toAge age: Duration) throws -> Int {
        try Validation.check(age >= .zero, "trim(toAge:) needs an age of at least zero, not \(age)")
        return try runTrim(.age(age.seconds), reason: .expired)
    }

    /// Removes least recently used entries until the disk has `bytes` free, or the cache is empty.
    @discardableResult
    public func trim(toFreeSpace bytes: Int64) throws -> Int {
        try Validation.check(bytes >= 0, "trim(toFreeSpace:) needs a size of at least 0, not \(bytes)")
        guard let free = FileStore.freeSpace(at: path) else {
            throw KVCacheError.io(operation: "statvfs", path: path, errno: errno)
        }
        guard free < bytes else { return 0 }
        let size = try totalSize
        return try runTrim(.size(max(0, size - (bytes - free))), reason: .pressure)
    }

    /// Removes every entry whose expiration date has passed (when a ``Cache`` with a
    /// fail-safe window opened this level: by more than that window).
    @discardableResult
    public func removeExpired() throws -> Int {
        try runTrim(.expired, reason: .expired)
    }

    /// Removes every entry, fast at any size: the rows go in one statement and the
    /// data folder is swapped for an empty one and deleted in the background.
    public func removeAll() throws {
        try removeAll(reportsChange: true)
    }

    /// The same, telling `directChanges` only if `reportsChange`: the ``Cache`` around this level
    /// passes false for its own writes, which keep its memory level in step already.
    func removeAll(reportsChange: Bool) throws {
        var trash: [String] = []
        try performWork(freesSpace: true, emptiesDataFolder: true, prepare: { try $0.removeAllWork() },
                        finish: { trash = $0.removedAll($1) })
        if reportsChange { reportDirectChange(.all) }
        guard !trash.isEmpty else { return }
        backgroundQueue.async(group: backgroundWork) { [trash] in
            for folder in trash { FileStore.removeDataFolder(folder) }
        }
    }

    /// Removes every entry whose key starts with `prefix` (byte-wise), and returns how
    /// many were stored. The keys with a prefix are one range of the manifest's primary
    /// key: the rows go in steps of 4,096 without reading any other; other callers go
    /// on between and during the steps. An empty prefix removes every entry.
    @discardableResult
    public func removeValues(withPrefix prefix: String) throws -> Int {
        try removeValues(withPrefix: prefix, reportsChange: true)
    }

    /// The same, telling `directChanges` only if `reportsChange`: the ``Cache`` around this level
    /// passes false for its own writes, which keep its memory level in step already.
    func removeValues(withPrefix prefix: String, reportsChange: Bool) throws -> Int {
        let limit = KVStorage.trimStepLimit
        let work = KVStorage.removeValuesWork(withPrefix: prefix, limit: limit)
        var removed = 0
        while true {
            let step = try performWork(freesSpace: true, prepare: { storage in
                try storage.requireWritable()
                return work
            }, finish: { storage, count in storage.counters.evictions[.removed, default: 0] += count })
            removed += step
            if step < limit {
                if reportsChange { reportDirectChange(.prefix(prefix)) }
                return removed
            }
        }
    }

    /// Removes every entry in steps, reporting `(removed, total)` after each step
    /// (from the calling thread, without the lock held). Other callers may run between steps.
    public func removeAll(progress: (_ removed: Int, _ total: Int) -> Void) throws {
        try removeAll(reportsChange: true, progress: progress)
    }

    /// The same, telling `directChanges` only if `reportsChange`: the ``Cache`` around this level
    /// passes false for its own writes, which keep its memory level in step already.
    func removeAll(reportsChange: Bool, progress: (_ removed: Int, _ total: Int) -> Void) throws {
        let total = try totalCount
        var removed = 0
        progress(0, total)
        while true {
            let step = try performWork(freesSpace: true, prepare: { _ in KVStorage.removeSomeWork }) { storage, removed in
                storage.counters.evictions[.removed, default: 0] += removed
            }
            if step == 0 { break }
            removed += step
            progress(removed, max(total, removed))
        }
        if reportsChange { reportDirectChange(.all) }
    }
}
