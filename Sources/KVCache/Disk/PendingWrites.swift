import Foundation

/// Writes accepted but not yet committed (group commit). Readers of this process
/// consult them first, so a value is readable as soon as `setValue` returns, while
/// the SQLite write lock is held only for the short commit itself: other processes
/// sharing the directory get the lock between commits.
struct PendingWrites {
    enum Write {
        /// Store this row (its file, if any, already written in full).
        case set(ManifestRow)
        case remove
        /// Remove only if the stored row is still expired at `now` when committed.
        case removeIfExpired(now: Double)
        /// Remove only if the row still names this (missing or damaged) file.
        case removeIfFile(String)

        var value: ManifestRow? {
            if case .set(let value) = self { return value }
            return nil
        }

        /// True if this write, applied to a row holding `row`, removes it: the conditions
        /// of the conditional removals, shared by the commit and `DiskReader.totals`.
        func removes(_ row: ManifestRow) -> Bool {
            switch self {
            case .set: false
            case .remove: true
            case .removeIfExpired(let now): !row.isLive(at: now)
            case .removeIfFile(let name): row.filename == name
            }
        }
    }

    /// One entry per key, in the order the keys were first written: a commit
    /// applies them in that order, so the access-time index (and the primary key,
    /// for keys written in order) grows at its end instead of at random places.
    private(set) var entries: [(key: ByteWiseKey, write: Write)] = []
    /// Each key's place in `entries`. Keyed byte-wise, like the manifest (see ByteWiseKey).
    private var positions: [ByteWiseKey: Int] = [:]
    /// Inline and extended bytes held in memory.
    private(set) var bytes = 0

    init() {}

    /// An empty set with room for `capacity` writes without growing.
    init(capacity: Int) {
        entries.reserveCapacity(capacity)
        positions = Dictionary(minimumCapacity: capacity)
    }

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    subscript(key: String) -> Write? { entries.isEmpty ? nil : self[ByteWiseKey(key)] }

    subscript(key: ByteWiseKey) -> Write? {
        guard let index = positions[key] else { return nil }
        return entries[index].write
    }

    /// Records `write` for `key`; returns the file of a pending set it replaced,
    /// which no row ever referenced and can be deleted at once.
    mutating func record(_ write: Write, forKey key: String) -> String? {
        let key = ByteWiseKey(key)
        var previous: Write?
        // One hash for a new key, the common case.
        if let index = positions.updateValue(entries.count, forKey: key) {
            positions[key] = index  // a rewritten key keeps its place
            previous = entries[index].write
            entries[index].write = write
        } else {
            entries.append((key, write))
        }
        bytes += Self.bytes(of: write) - (previous.map(Self.bytes(of:)) ?? 0)
        return previous?.value?.filename
    }

    /// Files written for pending sets (not referenced by any row yet).
    var files: [String] { entries.compactMap { $0.write.value?.filename } }

    /// True if any write is a set.
    var hasSets: Bool { entries.contains { $0.write.value != nil } }

    /// True if any write is a removal.
    var hasRemovals: Bool { entries.contains { $0.write.value == nil } }

    /// True if a write is the caller's own set or removal (not a conditional removal a
    /// read queued as housekeeping).
    var hasCallerWrites: Bool {
        entries.contains {
            switch $0.write {
            case .set, .remove: true
            case .removeIfExpired, .removeIfFile: false
            }
        }
    }

    /// Drops the sets and keeps the removals (in their order), for a commit retried on a
    /// full disk: removals give space back, sets take it. Returns the dropped sets' files.
    mutating func keepRemovalsOnly() -> (files: [String], droppedSets: Int) {
        let sets = entries.filter { $0.write.value != nil }
        guard !sets.isEmpty else { return ([], 0) }
        let removals = entries.filter { $0.write.value == nil }
        removeAll()
        for (key, write) in removals {
            positions[key] = entries.count
            entries.append((key, write))
        }
        return (sets.compactMap { $0.write.value?.filename }, sets.count)
    }

    mutating func removeAll() {
        // The next batch is usually as large: keep the storage instead of regrowing it.
        entries.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
        bytes = 0
    }

    private static func bytes(of write: Write) -> Int {
        guard let value = write.value else { return 0 }
        return (value.inline?.count ?? 0) + (value.extendedData?.count ?? 0)
    }
}
