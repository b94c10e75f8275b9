import Dispatch
import Foundation

/// Orders a `Cache`'s writes across its two levels and runs its background
/// disk writes.
///
/// Every mutation (disk part and memory part) runs under one lock, so the
/// levels never end up holding different values for a key. Reads take no lock;
/// a disk hit is promoted into memory only if no mutation ran since the read
/// began (`epoch`), so a promotion never brings back a replaced value.
///
/// A background write stays readable (`pendingWrite(forKey:)`) until it lands,
/// so a value evicted from memory in the meantime is neither a miss nor the older
/// value still on disk. A later mutation of the key supersedes a queued write,
/// which is then dropped: the last call wins, as if every write were immediate.
///
/// Keys are compared by their UTF-8 bytes (`ByteWiseKey`), as in both levels.
@usableFromInline
final class WriteCoordinator: @unchecked Sendable {
    struct Write {
        var generation: UInt64
        var data: Data
        var expiration: Expiration
        /// When the value expires (wall-clock seconds), counted from the `setValue` call.
        var deadline: Double?
        var extendedData: Data?

        func isExpired(at now: Double) -> Bool { deadline.map { $0 <= now } ?? false }
    }

    private struct State {
        /// Bumped by every mutation.
        var epoch: UInt64 = 0
        var pending: [ByteWiseKey: Write] = [:]
        var unreportedError: (any Error)?
        var failures = 0
    }

    private let disk: DiskCache
    /// Held across each mutation, and by the background queue while a write lands.
    /// Recursive: `onEviction` and `removeAll`'s progress run under it and may call back.
    private let mutationLock = NSRecursiveLock()
    // Guarded by its box; taken alone or inside `mutationLock`, never the other way round.
    private let state = MutexBox(State())
    private let queue = DispatchQueue(label: "KVCache.Cache.diskWrites", qos: .utility)
    private let group = DispatchGroup()

    init(disk: DiskCache) {
        self.disk = disk
    }

    /// Changes with every mutation; compare before and after a read.
    var epoch: UInt64 { state.withLock { $0.epoch } }

    /// Background writes that failed since the cache was opened.
    var failureCount: Int { state.withLock { $0.failures } }

    /// The queued write for `key` that has not landed yet, if any.
    func pendingWrite(forKey key: String) -> Write? {
        state.withLock { $0.pending.isEmpty ? nil : $0.pending[ByteWiseKey(key)] }
    }

    /// Runs a mutation of `key` (of every key when nil), superseding queued writes for it.
    @usableFromInline
    func mutate<Result>(_ key: String?, _ body: () throws -> Result) rethrows -> Result {
        mutationLock.lock()
        defer {
            state.withLock { state in
                state.epoch &+= 1
                if let key { state.pending[ByteWiseKey(key)] = nil } else { state.pending.removeAll() }
            }
            mutationLock.unlock()
        }
        return try body()
    }

    /// Queues `data` to be written for `key`, then runs `body` (the memory part)
    /// before any other mutation can start.
    @usableFromInline
    func enqueue(_ data: Data, forKey key: String, expiration: Expiration, extendedData: Data?,
                 then body: () -> Void) {
        let deadline = expiration.deadline(from: disk.configuration.clock())
        mutationLock.lock()
        let generation = state.withLock { state -> UInt64 in
            state.epoch &+= 1
            state.pending[ByteWiseKey(key)] = Write(
                generation: state.epoch, data: data, expiration: expiration,
                deadline: deadline, extendedData: extendedData)
            return state.epoch
        }
        body()
        mutationLock.unlock()
        queue.async(group: group) { [self] in land(key, generation: generation) }
    }

    /// Runs `body` if no mutation ran since `epoch` was read, and returns whether it ran.
    @usableFromInline @discardableResult
    func ifUnchanged(since epoch: UInt64, _ body: () throws -> Void) rethrows -> Bool {
        mutationLock.lock()
        defer { mutationLock.unlock() }
        guard self.epoch == epoch else { return false }
        try body()
        return true
    }

    /// Blocks until the writes queued so far have landed or failed, then throws
    /// the first failure not reported before (those values stay in memory only).
    func waitForBackgroundWrites() throws {
        group.wait()
        let error = state.withLock { state -> (any Error)? in
            defer { state.unreportedError = nil }
            return state.unreportedError
        }
        if let error { throw error }
    }

    private func land(_ key: String, generation: UInt64) {
        mutationLock.lock()
        defer { mutationLock.unlock() }
        guard let write = pendingWrite(forKey: key), write.generation == generation else { return }
        do {
            // A lifetime counts from the `setValue` call, unless the disk extends it on access.
            let expiration = disk.configuration.extendsExpirationOnAccess
                ? write.expiration : write.deadline.map { .date(Date(timeIntervalSince1970: $0)) } ?? .never
            try disk.setValue(write.data, forKey: key, expiration: expiration, extendedData: write.extendedData)
        } catch {
            state.withLock { state in
                state.failures += 1
                if state.unreportedError == nil { state.unreportedError = error }
            }
        }
        // Landing changes no value a reader can see, so the epoch stays.
        state.withLock { $0.pending[ByteWiseKey(key)] = nil }
    }
}
