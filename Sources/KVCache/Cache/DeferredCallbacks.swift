#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Callbacks that a thread holding the facade's locks must not run yet.
///
/// The memory level calls `onEviction` on the thread that evicts, and with the
/// facade's locks held, a callback that writes another key could wait for
/// a thread that waits for this one. Inside `whileDeferring`, user callbacks are
/// queued on the thread and run when its outermost section ends, with no lock held.
enum DeferredCallbacks {
    private final class Queue {
        var depth = 0
        var callbacks: [() -> Void] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
        precondition(result == 0, "pthread_key_create failed: \(result)")
        return key
    }()

    private static var queue: Queue {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Queue>.fromOpaque(pointer).takeUnretainedValue()
        }
        let queue = Queue()
        pthread_setspecific(key, Unmanaged.passRetained(queue).toOpaque())
        return queue
    }

    /// Runs `callback` now, or at the end of this thread's `whileDeferring` section.
    static func run(_ callback: @escaping () -> Void) {
        let queue = queue
        if queue.depth == 0 {
            callback()
        } else {
            queue.callbacks.append(callback)
        }
    }

    /// Runs `body`; callbacks passed to `run` meanwhile on this thread run after it.
    static func whileDeferring<Result>(_ body: () throws -> Result) rethrows -> Result {
        let queue = queue
        queue.depth += 1
        defer {
            queue.depth -= 1
            if queue.depth == 0, !queue.callbacks.isEmpty {
                let callbacks = queue.callbacks
                queue.callbacks = []
                for callback in callbacks { callback() }
            }
        }
        return try body()
    }
}
