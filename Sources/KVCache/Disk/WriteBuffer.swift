import Synchronization
import Foundation

/// What this process has written or read and the manifest does not show yet: the
/// pending writes, the batch being committed, buffered access times and the
/// counters, under a lock that covers memory work only.
///
/// Readers (see DiskReader) take only this lock and a read connection, never the
/// store's lock, so a get never waits for a commit, a checkpoint, a trim or a scan.
/// Writers hold the store's lock and take this one for each change they make here,
/// through the state's verbs: `stage` a write, `takeBatch` for a commit, `settle` it
/// once committed, or `requeue` what a failed commit keeps.
///
/// Why a read stays correct across a commit: a write leaves the buffer only after
/// the commit that holds it has returned, in the same lock hold that settles it, so
/// a reader that finds no write for its key here reads a WAL snapshot that has that
/// commit (a new one, or one its connection kept because nothing was committed since). A failed commit puts its writes back in
/// that same lock hold, so they are never in neither place.
final class WriteBuffer: @unchecked Sendable {
    struct State {
        /// Writes not yet handed to a commit (group commit).
        var pending = PendingWrites()
        /// The writes a transaction on the store's connection is applying.
        var committing: PendingWrites?
        /// The batch being committed on the commit connection.
        var detached: DetachedCommit?
        var accessTimes = AccessTimeBuffer()
        var counters = KVStorage.Counters()
        /// The latest modification or access time recorded (see `KVStorage.stamp(_:)`).
        var latestStamp = -Double.infinity
        /// Totals as of the last commit or stats read (pending writes not included).
        var committedTotals = KVStorage.Totals.zero
        var isAccessFlushScheduled = false
        var isUrgentAccessFlushScheduled = false
        /// A reader queued a removal and asked the commit thread to schedule its commit.
        var isCommitRequested = false
        /// Test hook: called (without any lock) when a read found no write for its key
        /// in the buffer and is about to read the manifest.
        var readWillQueryManifest: (@Sendable (String) -> Void)?

        /// The write this process made last for `key` and has not settled as committed.
        func latestWrite(forKey key: String) -> PendingWrites.Write? {
            if let write = pending[key] { return write }
            if let write = committing?[key] { return write }
            return detached?.writes[key]
        }

        /// A buffered access time for `key`, also from the batch in flight.
        func bufferedAccessTime(forKey key: String) -> Double? {
            accessTimes.time(for: key) ?? detached?.accessTimes[ByteWiseKey(key)]
        }

        /// `key`'s deadline as reads see it: the stored one, moved by a buffered access
        /// when reads extend lifetimes (`extends`); nil if it never expires.
        func deadline(of row: ManifestRow, forKey key: String, extends: Bool) -> Double? {
            // Only a lifetime that reads extend needs the buffered access looked up.
            guard extends, row.deadline != nil, row.lifetime != nil else { return row.deadline }
            return row.deadline(lastAccess: bufferedAccessTime(forKey: key), extends: true)
        }

        /// The clock, but never earlier than a time already recorded (see `KVStorage.stamp(_:)`).
        mutating func stamp(_ now: Double) -> Double {
            if now > latestStamp { latestStamp = now }
            return latestStamp
        }
    }

    // Recursive: a nested `withLock` (a bug: the body already has exclusive access to
    // the state) then stops at Swift's exclusivity check, with a message, not in a deadlock.
    private let mutex = PThreadMutex(recursive: true)
    private var state = State()
    /// Published on each unlock: false when no write is buffered and no read hook is
    /// set. Every reading thread loads it; only writers store it.
    private let holdsWrites = Atomic<Bool>(false)
    /// Bumped when removeAll starts swapping the data folder and again when it is done
    /// (odd while files of uncommitted writes are on their way back): a file read that
    /// overlapped a swap looks again instead of calling the row broken. Atomic, so a
    /// file read loads it without the lock (a plain hit takes no lock at all).
    private let folderSwaps = Atomic<UInt64>(0)

    /// The data-folder swap count (see `folderSwaps`), loaded before a file is read.
    var dataFolderSwaps: UInt64 { folderSwaps.load(ordering: .sequentiallyConsistent) }

    /// Marks the start or the end of a data-folder swap.
    func countFolderSwap() {
        folderSwaps.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    @inline(__always)
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        mutex.lock()
        defer { unlock() }
        return try body(&state)
    }

    @inline(__always)
    private func unlock() {
        let holds = !state.pending.isEmpty || state.committing != nil || state.detached != nil
            || state.readWillQueryManifest != nil
        if holds != holdsWrites.load(ordering: .relaxed) { holdsWrites.store(holds, ordering: .releasing) }
        mutex.unlock()
    }

    /// False only if, as of the last unlock, no write is buffered (without the lock).
    /// A write recorded before this call is seen; one that leaves the buffer does so
    /// after its commit, so a reader that sees false reads a snapshot with it.
    var mayHoldWrites: Bool { holdsWrites.load(ordering: .acquiring) }
}

// The life of a write in the buffer, as verbs on its state: the store calls them inside
// one `withLock`, so each change and its bookkeeping are seen together.
extension WriteBuffer.State {
    /// True when the committed totals are over the count or size limit.
    func exceeds(countLimit: Int, sizeLimit: Int64) -> Bool {
        committedTotals.count > countLimit || committedTotals.size > sizeLimit
    }

    /// Stages a caller's set or removal of `key` (a newer write replaces an older one)
    /// and counts it; returns the file of a staged set it replaced, for the caller to delete.
    mutating func stage(_ write: PendingWrites.Write, forKey key: String) -> String? {
        let replaced = pending.record(write, forKey: key)
        accessTimes.remove(key)
        if write.value != nil { counters.sets += 1 } else { counters.evictions[.removed, default: 0] += 1 }
        return replaced
    }

    /// Takes the pending writes and access times as the batch for the commit connection
    /// (`GroupCommitter.start`), with `work` to run in its transaction.
    mutating func takeBatch(work: DetachedCommit.Work?, emptiesDataFolder: Bool, maxWrites: Int) -> DetachedCommit {
        let batch = DetachedCommit(writes: pending, accessTimes: accessTimes.times, work: work,
                                   emptiesDataFolder: emptiesDataFolder)
        // The next batch is usually about as large: room for twice this one's writes
        // (up to a full buffer) saves regrowing the table, which rehashes every key.
        pending = PendingWrites(capacity: min(2 * pending.count, maxWrites))
        accessTimes.removeAll()
        detached = batch
        return batch
    }

    /// Takes the pending writes and access times for a transaction on the store's
    /// connection; readers find them in `committing` until it is settled.
    mutating func takeWritesForStoreConnection() -> (writes: PendingWrites, accessTimes: [ByteWiseKey: Double]) {
        let writes = pending
        committing = writes
        pending = PendingWrites()
        let times = accessTimes.times
        accessTimes.removeAll()
        return (writes, times)
    }

    /// Which batch a settle or requeue ends.
    enum Batch {
        /// The batch in flight on the commit connection (`detached`).
        case detached
        /// The writes a transaction on the store's connection applied (`committing`).
        case storeConnection
    }

    /// A batch has committed: its writes leave the buffer (the manifest has them), and
    /// its totals and counts are kept.
    mutating func settle(_ batch: Batch, totals: KVStorage.Totals, changes: ManifestBatch.Changes,
                         countsCommit: Bool) {
        end(batch)
        committedTotals = totals
        if countsCommit { counters.commits += 1 }
        counters.evictions[.replaced, default: 0] += changes.replaced
        counters.evictions[.expired, default: 0] += changes.expired
    }

    /// A batch failed and was rolled back: it ends, and what the failure policy keeps of
    /// its writes goes back beneath the writes made since, with its access times (unless
    /// `keepsAccessTimes` is false, or newer ones were recorded). Returns the files of the
    /// kept writes that newer ones superseded (never committed), for the caller to delete.
    mutating func requeue(_ batch: Batch, keeping writes: PendingWrites, accessTimes times: [ByteWiseKey: Double],
                          keepsAccessTimes: Bool) -> [String] {
        end(batch)
        counters.failedCommits += 1
        for (key, time) in times where keepsAccessTimes && accessTimes.time(for: key.string) == nil {
            accessTimes.record(key.string, at: time)
        }
        var superseded: [String] = []
        for (key, write) in writes.entries {
            if pending[key] == nil {
                _ = pending.record(write, forKey: key.string)
            } else if let name = write.value?.filename {
                superseded.append(name)
            }
        }
        return superseded
    }

    private mutating func end(_ batch: Batch) {
        switch batch {
        case .detached: detached = nil
        case .storeConnection: committing = nil
        }
    }

    /// Forgets the pending writes; returns their files, for the caller to delete.
    mutating func dropPending() -> [String] {
        let names = pending.files
        pending.removeAll()
        return names
    }

    /// For removeAll: every pending set becomes a removal, and access times go; returns
    /// the files of the sets, for the caller to delete.
    mutating func turnPendingSetsIntoRemovals() -> [String] {
        accessTimes.removeAll()
        var names: [String] = []
        for (key, write) in pending.entries where write.value != nil {
            if let name = pending.record(.remove, forKey: key.string) { names.append(name) }
        }
        return names
    }

    /// Files of writes not committed yet: pending, committing or in flight.
    var uncommittedFiles: Set<String> {
        var names = Set(pending.files)
        if let committing { names.formUnion(committing.files) }
        if let detached { names.formUnion(detached.writes.files) }
        return names
    }
}

// The store's calls on the buffer: each takes the buffer's lock for its duration.
extension KVStorage {
    /// Counts `count` entries removed for `reason` by a trim or a removal of many rows.
    func countEvictions(_ count: Int, reason: EvictionReason) {
        buffer.withLock { $0.counters.evictions[reason, default: 0] += count }
    }

    /// The write this process made last for `key` and has not settled as committed.
    func latestWrite(forKey key: String) -> PendingWrites.Write? {
        buffer.withLock { $0.latestWrite(forKey: key) }
    }

    /// A buffered access time for `key`, also from the batch in flight.
    func bufferedAccessTime(forKey key: String) -> Double? {
        buffer.withLock { $0.bufferedAccessTime(forKey: key) }
    }

    /// The time to record as a modification or access: the clock, but never earlier
    /// than a time already recorded. If the wall clock jumps backwards, entries touched
    /// after the jump still count as newer than those touched before it, so LRU trims
    /// keep evicting the least recently used. (Expiration deadlines stay on the wall clock.)
    func stamp(_ now: Double) -> Double {
        buffer.withLock { $0.stamp(now) }
    }
}

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

/// Last-access times recorded by reads and not yet written to the manifest.
///
/// A read must not become a write (SELECT ≈ 6 µs, SELECT plus an UPDATE ≈ 17 µs),
/// so gets record here and the store writes the times in one transaction: with
/// the next group commit, on an interval, when the buffer is large, before a
/// trim (so LRU order is right), and on close.
struct AccessTimeBuffer {
    /// Keyed byte-wise, like the manifest (see ByteWiseKey).
    private(set) var times: [ByteWiseKey: Double] = [:]

    var count: Int { times.count }
    var isEmpty: Bool { times.isEmpty }

    mutating func record(_ key: String, at time: Double) {
        times[ByteWiseKey(key)] = time
    }

    /// Forgets `key` (it was rewritten or removed; the row carries its own time).
    mutating func remove(_ key: String) {
        if !times.isEmpty { times.removeValue(forKey: ByteWiseKey(key)) }
    }

    func time(for key: String) -> Double? {
        times.isEmpty ? nil : times[ByteWiseKey(key)]
    }

    /// Empties the buffer, keeping room for as many times as it held: the next
    /// batch is usually as large, and regrowing rehashes every key several times.
    mutating func removeAll() {
        times = Dictionary(minimumCapacity: times.count)
    }
}
