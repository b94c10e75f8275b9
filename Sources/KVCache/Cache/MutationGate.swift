#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Shared by operations on one key (mutations and promotions), exclusive for
/// operations on every key (`removeAll`), so a promotion that checked its key
/// cannot insert after a `removeAll` emptied memory. The thread holding it
/// exclusively passes through its shared side (`removeAll`'s progress callback
/// may call back into the cache).
final class MutationGate: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
    /// The exclusive holder; written only by it, while it holds the gate.
    private let owner = MutexBox<pthread_t?>(nil)

    init() {
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    private var isHeldByThisThread: Bool {
        owner.withLock { owner in owner.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    func withShared<Result>(_ body: () throws -> Result) rethrows -> Result {
        if isHeldByThisThread { return try body() }
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    func withExclusive<Result>(_ body: () throws -> Result) rethrows -> Result {
        if isHeldByThisThread { return try body() }
        pthread_rwlock_wrlock(lock)
        owner.withLock { $0 = pthread_self() }
        defer {
            owner.withLock { $0 = nil }
            pthread_rwlock_unlock(lock)
        }
        return try body()
    }
}
