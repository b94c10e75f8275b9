#if HTTP
import Foundation
import Synchronization

/// Concurrent misses of one URL: the first request asks the origin; the others wait until its
/// answer is stored (or is not going to be), then look again, so a burst of requests for a URL
/// that is not stored reaches the origin once (like nginx's `proxy_cache_lock`). A waiter
/// gives up after the cache's `maximumMissWait` and asks the origin itself.
final class MissLocks: Sendable {
    private struct Waiting {
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private struct State {
        var locks: [String: Waiting] = [:]
        var lastID: UInt64 = 0
    }

    private let state = Mutex(State())
    /// Called when a request starts waiting for `key`, with the number now waiting: lets tests
    /// order events without sleeping.
    let didWait: @Sendable (String, Int) -> Void

    init(didWait: @escaping @Sendable (String, Int) -> Void = { _, _ in }) {
        self.didWait = didWait
    }

    /// The lock of `key` if no other request holds it; nil when one does.
    func tryLock(_ key: String) -> MissLock? {
        state.withLock { state in
            guard state.locks[key] == nil else { return nil }
            state.locks[key] = Waiting()
            return MissLock(key: key, locks: self)
        }
    }

    /// Waits until the holder of `key`'s lock releases it, `timeout` passes, or the task is
    /// cancelled.
    func wait(for key: String, timeout: Duration) async {
        let id = state.withLock { state -> UInt64 in
            state.lastID += 1
            return state.lastID
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let count = self.state.withLock { state -> Int? in
                            // Released already, or cancelled before it got here: no wait.
                            guard !Task.isCancelled, state.locks[key] != nil else { return nil }
                            state.locks[key]!.waiters[id] = continuation
                            return state.locks[key]!.waiters.count
                        }
                        guard let count else { return continuation.resume() }
                        self.didWait(key, count)
                    }
                } onCancel: {
                    self.state.withLock { $0.locks[key]?.waiters.removeValue(forKey: id) }?.resume()
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    fileprivate func release(_ key: String) {
        let waiters = state.withLock { $0.locks.removeValue(forKey: key)?.waiters.values.map { $0 } ?? [] }
        for waiter in waiters { waiter.resume() }
    }
}

/// A held miss lock: released once, explicitly or when dropped.
final class MissLock: Sendable {
    let key: String
    private let locks: MissLocks
    private let isReleased = Atomic(false)

    fileprivate init(key: String, locks: MissLocks) {
        self.key = key
        self.locks = locks
    }

    deinit {
        release()
    }

    func release() {
        if !isReleased.exchange(true, ordering: .acquiringAndReleasing) { locks.release(key) }
    }
}
#endif
