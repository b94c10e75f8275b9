import Foundation
@testable import KVCache

#if canImport(Glibc)
import Glibc
#endif

/// A cache whose clock only moves when the test says so.
func makeCache<Key: Hashable & Sendable, Value: Sendable>(
    _ configuration: MemoryCache<Key, Value>.Configuration = .init(autoTrimInterval: nil),
    clock: ManualClock = ManualClock()
) throws -> MemoryCache<Key, Value> {
    try MemoryCache(configuration: configuration, clock: CacheClock(manual: clock))
}

/// A small lock-protected box for state shared with callbacks and deinits.
final class Locked<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    init(_ state: State) { self.state = state }

    func withLock<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    var value: State { withLock { $0 } }
}

/// Records each `onEviction` call.
final class EvictionLog<Key: Sendable, Value: Sendable>: Sendable {
    let entries = Locked<[(key: Key, reason: EvictionReason)]>([])

    var callback: @Sendable (Key, Value, EvictionReason) -> Void {
        { [entries] key, _, reason in entries.withLock { $0.append((key, reason)) } }
    }

    var reasons: [EvictionReason] { entries.value.map(\.reason) }
    var keys: [Key] { entries.value.map(\.key) }
}

/// Where and when values were deinitialized.
final class DeinitRecorder: Sendable {
    struct Record {
        let id: Int
        let thread: pthread_t
        /// Whether the cache's lock was held (by anyone) when the value died.
        let cacheWasLocked: Bool
    }

    let records = Locked<[Record]>([])
    /// The cache whose lock the deinit probes; set after the cache is made.
    let probedCache = Locked<(any LockProbing)?>(nil)

    var count: Int { records.value.count }
    var ids: Set<Int> { Set(records.value.map(\.id)) }

    func recordDeinit(of id: Int) {
        let locked = probedCache.value?.isLocked() ?? false
        records.withLock { $0.append(Record(id: id, thread: pthread_self(), cacheWasLocked: locked)) }
    }
}

/// A value that reports its deinit to a recorder.
final class TrackedValue: Sendable {
    let id: Int
    let recorder: DeinitRecorder

    init(_ id: Int, _ recorder: DeinitRecorder) {
        self.id = id
        self.recorder = recorder
    }

    deinit { recorder.recordDeinit(of: id) }
}

protocol LockProbing: Sendable {
    func isLocked() -> Bool
}

extension MemoryCache: LockProbing {
    /// Whether the cache's mutex is held right now (tests run this on one thread,
    /// so a held lock means it is held by the code under test).
    func isLocked() -> Bool {
        guard mutex.tryLock() else { return true }
        mutex.unlock()
        return false
    }

    /// Slots in the slab, used or free.
    var slotCount: Int { withLock { storage.slotCount } }

    /// Slots the slab has room for.
    var slotCapacity: Int { withLock { Int(storage.capacity) } }

    /// Keys from most to least recently used.
    var keysByRecency: [Key] { withLock { storage.keysByRecency() } }
}
