import Foundation

/// Removals the caller asks for by scope: every entry, or every entry under a key prefix.
/// (One key: `removeValue(forKey:)` in DiskCache.swift; trims by limit: DiskCache+Trim.swift.)
extension DiskCache {
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
            }, finish: { storage, count in storage.countEvictions(count, reason: .removed) })
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
                storage.countEvictions(removed, reason: .removed)
            }
            if step == 0 { break }
            removed += step
            progress(removed, max(total, removed))
        }
        if reportsChange { reportDirectChange(.all) }
    }
}
