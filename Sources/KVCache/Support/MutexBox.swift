/// A value guarded by a pthread mutex (understood by ThreadSanitizer, no dependency).
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
}
