import Dispatch
import Foundation
import Synchronization

/// Orders a `Cache`'s writes across its two levels and runs its background
/// disk writes.
///
/// Three primitives order the facade, each for one reason:
/// - `mutationLock`: mutations run one at a time, so the levels never end up holding
///   different values for a key, and queued background writes land in order.
/// - `stripes` (`KeyStripes`): a disk hit is promoted into memory only if its key was
///   not mutated since the read began (`ReadToken`), under its key's stripe mutex only;
///   a read takes no lock before that. So a promotion never waits for a mutation's body,
///   is dropped only if its own key (or, rarely, one of its stripe) changed, and never
///   brings back a replaced value; `removeAll` and a prefix removal drop every promotion
///   begun before them.
/// - `state`: the queued writes and the epoch, for moments, inside the others or alone.
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
        var pending: [ByteWiseKey: Write] = [:]
        var unreportedError: (any Error)?
        var failures = 0
    }

    /// What a read saw when it began, for its promotion.
    @usableFromInline
    struct ReadToken {
        let key: ByteWiseKey
        let snapshot: KeyStripes.Snapshot
    }

    private let disk: DiskCache
    /// Held across each mutation, and by the background queue while a write lands.
    /// Recursive: `removeAll`'s progress runs under it and may call back.
    private let mutationLock = NSRecursiveLock()
    private let stripes = KeyStripes()
    // Guarded by its box; taken alone or inside the locks above, never the other way round.
    private let state = MutexBox(State())
    /// True while a write is queued (set under `state`'s lock): reads skip that lock otherwise.
    private let holdsQueuedWrites = Atomic<Bool>(false)
    private let queue = DispatchQueue(label: "KVCache.Cache.diskWrites", qos: .utility)
    private let group = DispatchGroup()
    /// Test hook: called inside a mutation of a key, with its locks held.
    nonisolated(unsafe) var duringMutation: ((String) -> Void)?
    /// Test hook: called when a read that found its key on disk is about to promote it.
    nonisolated(unsafe) var willPromote: ((String) -> Void)?

    init(disk: DiskCache) {
        self.disk = disk
    }

    /// Begins a read of `key` (before the levels are read); pass the token to `promote`.
    @usableFromInline
    func beginRead(_ key: String) -> ReadToken {
        let byteWise = ByteWiseKey(key)
        return ReadToken(key: byteWise, snapshot: stripes.snapshot(of: byteWise))
    }

    /// Runs `body` (the promotion) if the token's key was not mutated since its read
    /// began, holding only its stripe's mutex. Returns whether it ran.
    @usableFromInline @discardableResult
    func promote(_ token: ReadToken, _ body: () -> Void) -> Bool {
        willPromote?(token.key.string)
        return DeferredCallbacks.whileDeferring { stripes.promote(token.snapshot, body) }
    }

    /// Runs `body` as a mutation of the token's key if it was not mutated since the
    /// read began (a read that found undecodable bytes removes them only then).
    func mutateIfUnchanged(_ token: ReadToken, _ body: () throws -> Void) throws {
        try mutate(token.key.string) {
            guard stripes.isUnchangedBesidesThisMutation(since: token.snapshot) else { return }
            try body()
        }
    }

    /// Background writes that failed since the cache was opened.
    var failureCount: Int { state.withLock { $0.failures } }

    /// The queued write for `key` that has not landed yet, if any.
    func pendingWrite(forKey key: String) -> Write? {
        guard holdsQueuedWrites.load(ordering: .acquiring) else { return nil }
        return withState { $0.pending[ByteWiseKey(key)] }
    }

    /// `state`'s lock, publishing whether a write is queued as it is released.
    private func withState<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try state.withLock { state in
            defer {
                let holds = !state.pending.isEmpty
                if holds != holdsQueuedWrites.load(ordering: .relaxed) {
                    holdsQueuedWrites.store(holds, ordering: .releasing)
                }
            }
            return try body(&state)
        }
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
                withState { state in
                    state.epoch &+= 1
                    state.pending.removeAll()
                }
                return try stripes.mutatingAllKeys(body)
            }
            let byteWise = ByteWiseKey(key)
            return try stripes.mutating(byteWise) {
                // Supersedes a queued write of the key (`land` needs `mutationLock`).
                withState { state in
                    state.epoch &+= 1
                    if supersedesQueuedWrite { state.pending[byteWise] = nil }
                }
                duringMutation?(key)
                return try body()
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

    /// Runs a mutation of several keys at once, superseding queued writes for them.
    func mutate<Result>(keys: [String], _ body: () throws -> Result) rethrows -> Result {
        let keys = Set(keys.map(ByteWiseKey.init))
        return try DeferredCallbacks.whileDeferring {
            mutationLock.lock()
            defer { mutationLock.unlock() }
            return try stripes.mutating(keys) {
                withState { state in
                    state.epoch &+= 1
                    for key in keys { state.pending[key] = nil }
                }
                return try body()
            }
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
            withState { state in
                state.epoch &+= 1
                state.pending = state.pending.filter { !$0.key.string.utf8.starts(with: prefixBytes) }
            }
            let result = try disk()
            stripes.mutatingAllKeys(memory)
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
            let generation = withState { state -> UInt64 in
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
        withState { $0.pending[ByteWiseKey(key)] = nil }
    }
}
