#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `pthread_mutex_t` at a fixed heap address.
///
/// A pthread mutex must never move once initialized, so it lives behind a
/// pointer instead of inside a Swift value that the compiler may copy.
@usableFromInline
struct PThreadMutex: ~Copyable {
    @usableFromInline
    let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A recursive mutex may be locked again by the thread that holds it.
    init(recursive: Bool = false) {
        self.init(at: .allocate(capacity: 1), recursive: recursive)
    }

    private init(at memory: UnsafeMutablePointer<pthread_mutex_t>, recursive: Bool) {
        mutex = memory
        Self.initialize(at: memory, recursive: recursive, spins: false)
    }

    /// Initializes a mutex in memory its owner manages (and later passes to `destroy(at:)`).
    /// `spins`: a thread that finds the mutex held spins a little before it sleeps
    /// (glibc's adaptive mutex), for locks held only for a few memory accesses.
    static func initialize(at mutex: UnsafeMutablePointer<pthread_mutex_t>, recursive: Bool = false, spins: Bool) {
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        defer { pthread_mutexattr_destroy(&attributes) }
        if recursive { pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE)) }
        #if canImport(Glibc)
        if spins { pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP)) }
        #endif
        let result = pthread_mutex_init(mutex, &attributes)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
    }

    deinit {
        Self.destroy(at: mutex)
        UnsafeMutableRawPointer(mutex).deallocate()
    }

    /// Destroys a mutex made by `initialize(at:recursive:spins:)`; its memory stays.
    static func destroy(at mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
    }

    /// Bytes a mutex takes.
    static var size: Int { MemoryLayout<pthread_mutex_t>.size }

    @inlinable
    func lock() {
        Self.lock(mutex)
    }

    @inlinable
    func unlock() {
        Self.unlock(mutex)
    }

    /// Locks a mutex made by `initialize(at:recursive:spins:)`.
    @inlinable
    static func lock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        let result = pthread_mutex_lock(mutex)
        assert(result == 0, "pthread_mutex_lock failed: \(result)")
    }

    @inlinable
    static func unlock(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        let result = pthread_mutex_unlock(mutex)
        assert(result == 0, "pthread_mutex_unlock failed: \(result)")
    }

    /// Runs `body` with the lock held.
    @inlinable
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Takes the lock if it is free; never blocks.
    @inlinable
    func tryLock() -> Bool {
        pthread_mutex_trylock(mutex) == 0
    }
}
