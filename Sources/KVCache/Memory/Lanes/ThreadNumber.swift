import CProcessor
import Synchronization

/// A number for each thread that reads a memory cache, which picks its read lane.
@usableFromInline
enum ThreadNumber {
    /// The calling thread's number, given on its first call (1, 2, 3, ...): threads
    /// that start reading one after the other get consecutive numbers, so they read on
    /// different lanes. Not inlinable: the number lives in this module only.
    @usableFromInline @inline(never)
    static func current() -> UInt32 {
        let number = kvcache_thread_number()!
        if number.pointee == 0 {
            let given = nextThreadNumber.add(1, ordering: .relaxed).newValue
            number.pointee = given == 0 ? 1 : given
        }
        return number.pointee
    }
}

/// The number the next thread to read a memory cache is given.
private let nextThreadNumber = Atomic<UInt32>(0)
