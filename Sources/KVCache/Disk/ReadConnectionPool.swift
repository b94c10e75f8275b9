import CSQLite
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Read-only connections to the manifest, one per concurrent reader (up to a
/// fixed count), opened on first use. In WAL mode each connection reads its own
/// snapshot, beside the commit, the checkpoint and other readers: none of them
/// takes the store's lock or waits for SQLite's write lock. A connection keeps its
/// snapshot between reads while nothing was committed (see ReadConnection); an idle
/// pass ends those no read uses.
///
/// Each connection sits in a slot with a lock of its own, and a thread keeps to the
/// slot it last found free: readers on different threads rarely touch the same lock
/// or connection, and no pool-wide lock or condition is on the read path.
final class ReadConnectionPool: @unchecked Sendable {
    let path: String
    private let busyTimeout: Double
    private let slots: [Slot]
    private let stateLock = PThreadMutex()
    /// Bumped when the manifest is replaced (a rebuild).
    private var generation = 0
    private var isIdlePassScheduled = false
    /// A snapshot was begun since the idle pass started: it must run again.
    private var isIdlePassWanted = false
    private var retiredCounts = (hits: 0, misses: 0)
    private var _idlePassWillRun: (@Sendable () -> Void)?
    private var _idlePassDidRun: (@Sendable (Int) -> Void)?

    final class Slot: @unchecked Sendable {
        let lock = PThreadMutex()
        var connection: ReadConnection?
        var isClosed = false
    }

    /// A corruption error seen on a connection of `generation`: the owner rebuilds
    /// only if no rebuild has happened since (see `DiskCache.read`).
    struct CorruptionSeen: Error {
        var error: SQLiteError
        var generation: Int
    }

    init(path: String, capacity: Int, busyTimeout: Double) {
        self.path = path
        self.busyTimeout = busyTimeout
        slots = (0..<max(1, capacity)).map { _ in Slot() }
    }

    /// The generation of the manifest file that new connections open.
    var currentGeneration: Int { stateLock.withLock { generation } }

    /// Runs `body` on a connection of its own; waits only while every connection is
    /// busy with another read. Throws `KVCacheError.closed` once the pool is closed,
    /// and `CorruptionSeen` for a corruption error (the connection is dropped).
    func withConnection<Result>(_ body: (ReadConnection) throws -> Result) throws -> Result {
        let slot = acquireSlot()
        defer { slot.lock.unlock() }
        if slot.isClosed { throw KVCacheError.closed }
        let connection: ReadConnection
        if let open = slot.connection {
            connection = open
        } else {
            connection = try ReadConnection(path: path, busyTimeout: busyTimeout, generation: currentGeneration)
            slot.connection = connection
        }
        do {
            let (result, begun) = try connection.read(body)
            if begun { scheduleIdlePass() }
            return result
        } catch let error as SQLiteError where error.isCorruption {
            retireConnection(of: slot)
            throw CorruptionSeen(error: error, generation: connection.generation)
        }
    }

    /// A free slot, locked: the thread's own first, then any free one (which becomes
    /// the thread's own), else waits for its own. A thread that keeps its slot keeps
    /// its connection's pages and snapshot in its core's cache.
    private func acquireSlot() -> Slot {
        let count = slots.count
        let start = Self.preferredSlot(count: count)
        for offset in 0..<count {
            let index = (start + offset) % count
            let slot = slots[index]
            if slot.lock.tryLock() {
                if offset != 0 { Self.setPreferredSlot(index) }
                return slot
            }
        }
        let slot = slots[start]
        slot.lock.lock()
        return slot
    }

    /// Each thread's slot, as an index (any pool: reduced modulo its slot count).
    private static let preferredSlotKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left")
        return key
    }()

    private static func preferredSlot(count: Int) -> Int {
        if let stored = pthread_getspecific(preferredSlotKey) {
            return (Int(bitPattern: stored) - 1) % count
        }
        return threadHash() % count
    }

    private static func setPreferredSlot(_ index: Int) {
        // Stored as index + 1: a null value means none yet.
        pthread_setspecific(preferredSlotKey, UnsafeRawPointer(bitPattern: index + 1))
    }

    private static func threadHash() -> Int {
        #if os(Linux)
        let identity = UInt64(pthread_self())
        #else
        let identity = UInt64(UInt(bitPattern: pthread_self()))
        #endif
        // Thread identities are aligned addresses: mix before taking a remainder.
        return Int(truncatingIfNeeded: ((identity >> 12) &* 0x9E37_79B9_7F4A_7C15) >> 33)
    }

    /// Ends, after a while, the read transactions that connections keep open between
    /// reads, once no read uses them: an idle snapshot would hold back checkpoints
    /// (this process's and others') and let the WAL grow. Runs while any is open.
    private func scheduleIdlePass() {
        let isScheduled = stateLock.withLock {
            defer { isIdlePassScheduled = true; isIdlePassWanted = true }
            return isIdlePassScheduled
        }
        if !isScheduled { runIdlePassLater() }
    }

    private func runIdlePassLater() {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + Self.idlePassInterval) { [self] in
            // Strong: a weak reference would give the pool a side table, and every
            // retain of it on the read path would take the slow, contended route.
            idlePass()
        }
    }

    /// How long a snapshot may stay open with no read using it: one to two intervals.
    static let idlePassInterval: DispatchTimeInterval = .milliseconds(10)

    private func idlePass() {
        let willRun = stateLock.withLock {
            isIdlePassWanted = false
            return _idlePassWillRun
        }
        willRun?()
        let remaining = endIdleSnapshots()
        let (again, didRun) = stateLock.withLock {
            isIdlePassScheduled = remaining > 0 || isIdlePassWanted
            return (isIdlePassScheduled, _idlePassDidRun)
        }
        didRun?(remaining)
        if again { runIdlePassLater() }
    }

    /// Ends every snapshot no read is using now: before a checkpoint, which an open
    /// snapshot would stop short of the WAL's end (and keep from resetting it).
    func endUnusedSnapshots() {
        endIdleSnapshots(includingRecentlyUsed: true)
    }

    /// Ends the snapshots no read has used since the last call; returns how many stay
    /// open (in use, or used since). Two calls with no read between end them all.
    @discardableResult
    func endIdleSnapshots(includingRecentlyUsed: Bool = false) -> Int {
        var remaining = 0
        for slot in slots {
            guard slot.lock.tryLock() else {
                remaining += 1
                continue
            }
            defer { slot.lock.unlock() }
            guard let connection = slot.connection, connection.hasOpenSnapshot else { continue }
            if connection.isUsedSinceIdlePass, !includingRecentlyUsed {
                connection.isUsedSinceIdlePass = false
                remaining += 1
            } else {
                connection.endSnapshot()
            }
        }
        return remaining
    }

    /// Test hook: called (on the pass's thread, no lock held) before each idle pass.
    var idlePassWillRun: (@Sendable () -> Void)? {
        get { stateLock.withLock { _idlePassWillRun } }
        set { stateLock.withLock { _idlePassWillRun = newValue } }
    }

    /// Test hook: called after each idle pass with the count of snapshots left open.
    var idlePassDidRun: (@Sendable (Int) -> Void)? {
        get { stateLock.withLock { _idlePassDidRun } }
        set { stateLock.withLock { _idlePassDidRun = newValue } }
    }

    /// The connections keeping a read transaction open (waits for reads in progress).
    var openSnapshotCount: Int {
        slots.reduce(0) { count, slot in
            count + slot.lock.withLock { slot.connection?.hasOpenSnapshot == true ? 1 : 0 }
        }
    }

    /// After the manifest was replaced (call once the new one is open): connections to
    /// the old file are closed, waiting for a read in progress on each to finish.
    func invalidate() {
        stateLock.withLock { generation += 1 }
        for slot in slots {
            slot.lock.withLock { retireConnection(of: slot) }
        }
    }

    /// Closes the slot's connection, keeping its counts (the slot's lock is held).
    private func retireConnection(of slot: Slot) {
        guard let connection = slot.connection else { return }
        slot.connection = nil
        stateLock.withLock {
            retiredCounts.hits += connection.hits
            retiredCounts.misses += connection.misses
        }
        connection.close()
    }

    /// Hits and misses counted on the connections, closed ones included.
    var readCounts: (hits: Int, misses: Int) {
        var counts = stateLock.withLock { retiredCounts }
        for slot in slots {
            slot.lock.withLock {
                counts.hits += slot.connection?.hits ?? 0
                counts.misses += slot.connection?.misses ?? 0
            }
        }
        return counts
    }

    /// Closes every connection, waiting for reads in progress to finish. Later reads throw `.closed`.
    func close() {
        for slot in slots {
            slot.lock.withLock {
                slot.isClosed = true
                retireConnection(of: slot)
            }
        }
    }
}

/// One read-only connection of the pool, with its read statements prepared.
///
/// It keeps its read transaction open between reads while the WAL-index header
/// is unchanged: SQLite rewrites that header on every commit (by any connection or
/// process), WAL reset and recovery, so an unchanged header means a new transaction
/// would read exactly what the open one reads. Starting a transaction costs file
/// locks and an fstat, which the kernel serializes per file: reusing it is what
/// lets reads on several threads run in parallel.
final class ReadConnection {
    let database: Database
    let selectValue: Statement
    let selectMetadata: Statement
    let generation: Int
    private let begin: Statement
    private let end: Statement
    /// The header copied before the open transaction began (nil: none open).
    private var snapshotHeader: WALIndexHeader?
    /// Set by each read, cleared by the pool's idle pass (see `endIdleSnapshot`).
    var isUsedSinceIdlePass = false
    /// Reads decided on this connection (see DiskReader.lookUp): counted here, under
    /// the slot's lock, so that a plain hit touches nothing other threads write.
    var hits = 0
    var misses = 0

    init(path: String, busyTimeout: Double, generation: Int) throws {
        database = try Database(path: path, busyTimeout: busyTimeout, create: false, readOnly: true)
        do {
            // As the store's connection: a page read from the OS costs a 16 KiB copy.
            try database.execute("PRAGMA cache_size = -16384")
            selectValue = try database.statement(Manifest.selectValue)
            selectMetadata = try database.statement(Manifest.selectMetadata)
            begin = try database.statement("BEGIN")
            end = try database.statement("COMMIT")
        } catch {
            database.close()
            throw error
        }
        self.generation = generation
    }

    /// True while a read transaction is kept open between reads.
    var hasOpenSnapshot: Bool { snapshotHeader != nil }

    /// Runs `body` in a read transaction that sees every commit made before this
    /// call: the open one if nothing was committed since it began, else a new one.
    /// Returns whether a new one was begun.
    func read<Result>(_ body: (ReadConnection) throws -> Result) throws -> (Result, begun: Bool) {
        isUsedSinceIdlePass = true
        var begun = false
        if let snapshotHeader {
            if WALIndexHeader(database) != snapshotHeader {
                self.snapshotHeader = nil
                try end.run { try $0.execute() }
            }
        }
        if snapshotHeader == nil {
            // Copied before the transaction begins: if it is unchanged later, no
            // commit has happened since the snapshot, which may only be newer.
            let header = WALIndexHeader(database)
            try begin.run { try $0.execute() }
            begun = true
            do {
                let result = try body(self)
                if let header {
                    snapshotHeader = header
                } else {
                    // No mapped WAL index before this read (the first one, or not WAL):
                    // end it; the next read begins one with a header if there is one now.
                    try end.run { try $0.execute() }
                }
                return (result, begun)
            } catch {
                endSnapshot()
                throw error
            }
        }
        do {
            return (try body(self), begun)
        } catch {
            endSnapshot()
            throw error
        }
    }

    /// Ends the open read transaction, if any, so checkpoints can pass it.
    func endSnapshot() {
        snapshotHeader = nil
        if database.isInTransaction { try? end.run { try $0.execute() } }
    }

    func close() {
        snapshotHeader = nil
        database.close()
    }
}

/// A copy of the WAL-index header (48 bytes), compared whole.
struct WALIndexHeader: Equatable {
    private var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    /// The connection's current header, or nil if it has no mapped WAL index.
    init?(_ database: Database) {
        guard let handle = database.handle else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
        let copied = withUnsafeMutableBytes(of: &words) { kvcache_sqlite_wal_index_header(handle, $0.baseAddress) }
        guard copied != 0 else { return nil }
        self.words = words
    }

    static func == (lhs: WALIndexHeader, rhs: WALIndexHeader) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2
            && lhs.words.3 == rhs.words.3 && lhs.words.4 == rhs.words.4 && lhs.words.5 == rhs.words.5
    }
}
