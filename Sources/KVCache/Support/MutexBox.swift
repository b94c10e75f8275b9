/// A value guarded by a pthread mutex (understood by ThreadSanitizer, no dependency).
///
/// Read a stored closure with `load()`, never `withLock { $0 }`: a function value
/// passed `inout` through this generic box is reabstracted on the way in and again
/// on the way back, so each `withLock { $0 }` would store the closure wrapped in two
/// more thunks. The chain grows by one link per call, each call walks all of it, and
/// releasing a long one overflows the stack (issue 38: one link per change reported
/// through `Cache.disk`).
package final class MutexBox<Value>: @unchecked Sendable {
    private let mutex = PThreadMutex()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        mutex.lock()
        defer { mutex.unlock() }
        return try body(&value)
    }

    /// A copy of the value, read under the lock without writing it back (see the type's
    /// note: the way to read a closure).
    package func load() -> Value {
        mutex.lock()
        defer { mutex.unlock() }
        return value
    }
}
