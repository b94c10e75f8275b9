#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `pthread_cond_t` at a fixed heap address, timed against the monotonic clock
/// (Linux), so a wall-clock jump neither delays nor hurries a timed wait.
package struct Condition: ~Copyable {
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if os(Linux)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        let result = pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        precondition(result == 0, "pthread_cond_init failed: \(result)")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    /// Seconds on the clock that `wait(on:until:)` deadlines use.
    package static func now() -> Double {
        var time = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_MONOTONIC, &time)
        #else
        clock_gettime(CLOCK_REALTIME, &time)
        #endif
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Releases `mutex` (held by the caller), waits for a signal or `deadline`
    /// (seconds on `now()`'s clock; nil waits for a signal only), and retakes it.
    /// May return early: callers recheck their state.
    func wait(on mutex: borrowing PThreadMutex, until deadline: Double?) {
        // A deadline past what timespec holds is as good as none.
        guard let deadline, deadline < Double(Int32.max) else {
            pthread_cond_wait(condition, mutex.mutex)
            return
        }
        let whole = deadline.rounded(.down)
        var time = timespec(tv_sec: Int(whole), tv_nsec: Int((deadline - whole) * 1e9))
        pthread_cond_timedwait(condition, mutex.mutex, &time)
    }

    func signal() {
        pthread_cond_signal(condition)
    }

    func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
