import Dispatch
import Foundation

/// Orders a `Cache`'s writes across its two levels and runs its background
/// disk writes.
///
/// Mutations run one at a time (`mutationLock`), each also holding its key's lock
/// (`KeyLockTable`), so the levels never end up holding different values for a
/// key. Reads take no lock; a disk hit is promoted into memory under its key's lock
/// only, and only if that key was not mutated since the read began (`ReadToken`; a
/// mutation bumps the key's generation when it begins and again when it ends, so a read
/// that began while a mutation ran, and may have read a level before the mutation changed
/// it, promotes nothing),
/// so a promotion never waits for, nor is dropped by, a write of another key, and
/// never brings back a replaced value. `removeAll` holds the gate exclusively,
/// which promotions share.
///
/// A background write stays readable (`pendingWrite(forKey:)`) until it lands,
/// so a value evicted from memory in the meantime is neither a miss nor the older
/// value still on disk. A later mutation of the key supersedes a queued write,
/// which is then dropped: the last call wins, as if every write were immediate.
///
/// Keys are compared by their UTF-8 bytes (`ByteWiseKey`), as in both levels.
/// Eviction callbacks raised inside these sections run after them, with no lock
/// held (`DeferredCallbacks`).
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
        /// Bumped by every mutation (orders queued background writes).
        var epoch: UInt64 = 0
        /// Bumped by every mutation of all keys (`removeAll`).
        var allKeysEpoch: UInt64 = 0
        var pending: [ByteWiseKey: Write] = [:]
        var unreportedError: (any Error)?
        var failures = 0
    }

    /// What a read saw when it began: released by `promote` or `endRead`.
    @usableFromInline
    struct ReadToken {
        let key: ByteWiseKey
        let entry: KeyLockTable.Entry
        let generation: UInt64
        let allKeysEpoch: UInt64
    }

    private let disk: DiskCache
    /// Held across each mutation, and by the background queue while a write lands.
    /// Recursive: `removeAll`'s progress runs under it and may call back.
    private let mutationLock = NSRecursiveLock()
    private let keys = KeyLockTable()
    private let gate = MutationGate()
    // Guarded by its box; taken alone or inside the locks above, never the other way round.
    private let state = MutexBox(State())
    private let queue = DispatchQueue(label: "KVCache.Cache.diskWrites", qos: .utility)
    private let group = DispatchGroup()
    /// Test hook: called inside a mutation of a key, with its locks held.
    nonisolated(unsafe) var duringMutation: ((String) -> Void)?
    /// Test hook: called when a read that found its key on disk is about to promote it.
    nonisolated(unsafe) var willPromote: ((String) -> Void)?

    init(disk: DiskCache) {
        self.disk = disk
    }

    /// Begins a read of `key`; pass the token to `promote` or `endRead`.
    @usableFromInline
    func beginRead(_ key: String) -> ReadToken {
        let byteWise = ByteWiseKey(key)
        let (entry, generation) = keys.acquire(byteWise)
        return ReadToken(key: byteWise, entry: entry, generation: generation,
                         allKeysEpoch: state.withLock { $0.allKeysEpoch })
    }

    /// Ends a read that promotes nothing.
    @usableFromInline
    func endRead(_ token: ReadToken) {
        keys.release(token.key, token.entry)
    }

    /// Runs `body` (the promotion) if the token's key was not mutated since its read
    /// began, holding only that key's lock; ends the read. Returns whether it ran.
    @usableFromInline @discardableResult
    func promote(_ token: ReadToken, _ body: () -> Void) -> Bool {
        defer { keys.release(token.key, token.entry) }
        willPromote?(token.key.string)
        return DeferredCallbacks.whileDeferring {
            gate.withShared {
                token.entry.lock.withLock {
                    guard keys.generation(of: token.entry) == token.generation,
                          state.withLock({ $0.allKeysEpoch }) == token.allKeysEpoch else { return false }
                    body()
                    return true
                }
            }
        }
    }

    /// Runs `body` as a mutation of the token's key if it was not mutated since the
    /// read began (a read that found undecodable bytes removes them only then).
    func mutateIfUnchanged(_ token: ReadToken, _ body: () throws -> Void) throws {
        try mutate(token.key.string) {
            // `mutate` bumped the generation once for this mutation.
            guard keys.generation(of: token.entry) == token.generation &+ 1,
                  state.withLock({ $0.allKeysEpoch }) == token.allKeysEpoch else { return }
            try body()
        }
    }

    /// Keys with a read or a mutation under way (for tests: 0 when all are over).
    var keysInUse: Int { keys.count }

    /// Background writes that failed since the cache was opened.
    var failureCount: Int { state.withLock { $0.failures } }

    /// The queued write for `key` that has not landed yet, if any.
    func pendingWrite(forKey key: String) -> Write? {
        state.withLock { $0.pending.isEmpty ? nil : $0.pending[ByteWiseKey(key)] }
    }

    /// Runs a mutation of `key` (of every key when nil), superseding queued writes for it
    /// unless `supersedesQueuedWrite` is false (the body then decides).
    @usableFromInline
    func mutate<Result>(_ key: String?, supersedesQueuedWrite: Bool = true,
                        _ body: () throws -> Result) rethrows -> Result {
        try DeferredCallbacks.whileDeferring {
            mutationLock.lock()
            defer { mutationLock.unlock() }
            guard let key else {
                return try gate.withExclusive {
                    state.withLock { state in
                        state.epoch &+= 1
                        state.allKeysEpoch &+= 1
                        state.pending.removeAll()
                    }
                    // Again at the end: a read begun meanwhile may have read what the body removed.
                    defer { state.withLock { $0.allKeysEpoch &+= 1 } }
                    return try body()
                }
            }
            let byteWise = ByteWiseKey(key)
            return try gate.withShared {
                let (entry, _) = keys.acquire(byteWise)
                defer { keys.release(byteWise, entry) }
                return try entry.lock.withLock {
                    keys.bump(entry)
                    // Bumped again at the end, still under the key's lock: a read that began
                    // during the body (after the first bump) may have read a level before the
                    // body changed it, and must not promote what it read.
                    defer { keys.bump(entry) }
                    // Supersedes a queued write of the key (`land` needs `mutationLock`).
                    state.withLock { state in
                        state.epoch &+= 1
                        if supersedesQueuedWrite { state.pending[byteWise] = nil }
                    }
                    duringMutation?(key)
                    return try body()
                }
            }
        }
    }

    /// Gives the queued write of `key`, if any, a new expiration from now; true if there
    /// was one. Called inside a mutation of `key`.
    func retimeQueuedWrite(forKey key: String, expiration: Expiration) -> Bool {
        let deadline = expiration.deadline(from: disk.configuration.clock())
        return state.withLock { state in
            guard state.pending[ByteWiseKey(key)] != nil else { return false }
            state.pending[ByteWiseKey(key)]!.expiration = expiration
            state.pending[ByteWiseKey(key)]!.deadline = deadline
            return true
        }
    }

    /// Runs a mutation of several keys at once (their locks taken in byte-wise order),
    /// superseding queued writes for them.
    func mutate<Result>(keys: [String], _ body: () throws -> Result) rethrows -> Result {
        let sorted = Set(keys.map(ByteWiseKey.init)).sorted { $0.string.utf8.lexicographicallyPrecedes($1.string.utf8) }
        return try DeferredCallbacks.whileDeferring {
            mutationLock.lock()
            defer { mutationLock.unlock() }
            return try gate.withShared {
                try withKeyLocks(sorted[...]) {
                    state.withLock { state in
                        state.epoch &+= 1
                        for key in sorted { state.pending[key] = nil }
                    }
                    return try body()
                }
            }
        }
    }

    /// Runs `body` holding the locks of `keys` (each bumped, as one mutation of it).
    private func withKeyLocks<Result>(_ keys: ArraySlice<ByteWiseKey>, _ body: () throws -> Result) rethrows -> Result {
        guard let key = keys.first else { return try body() }
        let (entry, _) = self.keys.acquire(key)
        defer { self.keys.release(key, entry) }
        return try entry.lock.withLock {
            self.keys.bump(entry)
            // Again at the end, as in `mutate(_:)`: a read begun meanwhile promotes nothing.
            defer { self.keys.bump(entry) }
            return try withKeyLocks(keys.dropFirst(), body)
        }
    }

    /// Runs a removal of every key with `prefix`: `disk` (the disk part, which may take
    /// long) as a mutation, without holding up reads and their promotions; then `memory`
    /// (the memory part) exclusive of promotions, which it makes drop: a promotion read
    /// before the end may have read a row the disk part removed. Queued writes of such
    /// keys are superseded. If `disk` throws, `memory` does not run.
    func removeValues<Result>(withPrefix prefix: String, disk: () throws -> Result,
                              memory: () -> Void) rethrows -> Result {
        try DeferredCallbacks.whileDeferring {
            mutationLock.lock()
            defer { mutationLock.unlock() }
            let prefixBytes = Array(prefix.utf8)
            state.withLock { state in
                state.epoch &+= 1
                state.pending = state.pending.filter { !$0.key.string.utf8.starts(with: prefixBytes) }
            }
            let result = try disk()
            gate.withExclusive {
                state.withLock { $0.allKeysEpoch &+= 1 }
                memory()
            }
            return result
        }
    }

    /// Queues `data` to be written for `key`, then runs `body` (the memory part)
    /// before any other mutation can start.
    @usableFromInline
    func enqueue(_ data: Data, forKey key: String, expiration: Expiration, extendedData: Data?,
                 then body: () -> Void) {
        let deadline = expiration.deadline(from: disk.configuration.clock())
        let generation = mutate(key) { () -> UInt64 in
            let generation = state.withLock { state -> UInt64 in
                state.epoch &+= 1
                state.pending[ByteWiseKey(key)] = Write(
                    generation: state.epoch, data: data, expiration: expiration,
                    deadline: deadline, extendedData: extendedData)
                return state.epoch
            }
            body()
            return generation
        }
        queue.async(group: group) { [self] in land(key, generation: generation) }
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
                ? write.expiration : Expiration(deadline: write.deadline)
            try disk.setValue(write.data, forKey: key, expiration: expiration, extendedData: write.extendedData,
                              reportsChange: false)
        } catch {
            disk.diagnostics.failed("the background disk write of \(key) (kept in memory only)", error, path: disk.path)
            state.withLock { state in
                state.failures += 1
                if state.unreportedError == nil { state.unreportedError = error }
            }
        }
        // Landing changes no value a reader can see, so the epoch stays.
        state.withLock { $0.pending[ByteWiseKey(key)] = nil }
    }
}
