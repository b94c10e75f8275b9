#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite

/// Serializes opening a store across processes: an advisory `flock` on the cache
/// directory itself, held while a store checks, creates or adopts its manifest.
///
/// Without it, processes creating one store at once raced inside SQLite (issue 38):
/// switching a new database to WAL needs its exclusive lock, and SQLite's busy handler
/// does not wait for a lock that a connection already reading cannot take (it would
/// deadlock), so all but one failed with "database is locked"; and one process could
/// see another's schema half-read (a table, no version yet) and call it another
/// application's database. Under the lock, one process at a time opens: a later one
/// finds the manifest complete, and an empty manifest it finds is one whose creation
/// did not finish (a crash), which it may set up.
///
/// The directory's own descriptor is locked: nothing is created in it, and the lock goes
/// away with the process. Read-write opens lock it exclusively, read-only ones shared
/// (so they wait for a creation under way). It waits up to the busy timeout, then
/// throws `SQLITE_BUSY`. Where `flock` is not supported (some network file systems), or
/// the directory cannot be opened for reading, opens go on without it.
final class OpenLock {
    private var descriptor: Int32

    /// Takes the lock on `directory`, waiting up to `timeout` seconds for other processes' opens.
    init(directory: String, exclusive: Bool, timeout: Double) throws {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        self.descriptor = descriptor
        // A directory this process may use but not list (mode -wx): open without the lock,
        // as before it; the store's own checks report what it cannot do.
        guard descriptor >= 0 else { return }
        let operation = (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(Int64(Seconds.clampedMilliseconds(timeout))))
        var pause = 1  // milliseconds, doubled up to 16 (as SQLite's busy handler waits)
        while flock(descriptor, Int32(operation)) != 0 {
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK else { return }  // not supported here: open without it
            guard clock.now < deadline else {
                throw SQLiteError(extendedCode: SQLITE_BUSY,
                                  message: "database is locked: another process is opening this cache", sql: nil)
            }
            var interval = timespec(tv_sec: 0, tv_nsec: pause * 1_000_000)
            nanosleep(&interval, nil)
            pause = min(pause * 2, 16)
        }
    }

    /// Releases the lock (closing the descriptor does); releasing again does nothing.
    func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
