#if Vapor
import Synchronization
import Vapor

/// The KVCache driver of one application: the storage `app.cache` uses now. Kept in the
/// application's storage; its lifecycle handler shuts the storage down with the application.
final class DriverState: Sendable {
    /// The key of the application's state, and of the lock that creates it.
    struct Key: StorageKey, LockKey {
        typealias Value = DriverState
    }

    let current = Mutex<DriverStorage?>(nil)

    /// The state of `app`, created (and its lifecycle handler registered) on first use.
    static func of(_ app: Application) -> DriverState {
        let lock = app.locks.lock(for: Key.self)
        return lock.withLock {
            if let state = app.storage[Key.self] { return state }
            let state = DriverState()
            app.storage[Key.self] = state
            app.lifecycle.use(DriverLifecycle(state: state))
            return state
        }
    }

    /// Makes `storage` the one `app.cache` uses; returns the one it replaces.
    func replace(with storage: DriverStorage) -> DriverStorage? {
        current.withLock { current in
            defer { current = storage }
            return current
        }
    }
}
#endif
