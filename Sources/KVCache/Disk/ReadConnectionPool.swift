#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Read-only connections to the manifest, one per concurrent reader (up to a
/// fixed count), opened on first use. In WAL mode each read gets its own snapshot
/// and runs beside the commit, the checkpoint and other readers: none of them
/// takes the store's lock or waits for SQLite's write lock.
///
/// Each connection sits in a slot with a lock of its own, and a thread starts at
/// the slot its identity picks: readers on different threads rarely touch the same
/// lock, and no pool-wide lock or condition is on the read path.
final class ReadConnectionPool: @unchecked Sendable {
    let path: String
    private let busyTimeout: Double
    private let slots: [Slot]
    private let generationLock = PThreadMutex()
    /// Bumped when the manifest is replaced (a rebuild).
    private var generation = 0

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
    var currentGeneration: Int { generationLock.withLock { generation } }

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
            return try body(connection)
        } catch let error as SQLiteError where error.isCorruption {
            connection.close()
            slot.connection = nil
            throw CorruptionSeen(error: error, generation: connection.generation)
        }
    }

    /// A free slot, locked: the thread's own first, then any free one, else waits for its own.
    private func acquireSlot() -> Slot {
        let count = slots.count
        let start = Self.threadHash() % count
        for offset in 0..<count {
            let slot = slots[(start + offset) % count]
            if slot.lock.tryLock() { return slot }
        }
        let slot = slots[start]
        slot.lock.lock()
        return slot
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

    /// After the manifest was replaced (call once the new one is open): connections to
    /// the old file are closed, waiting for a read in progress on each to finish.
    func invalidate() {
        generationLock.withLock { generation += 1 }
        for slot in slots {
            slot.lock.withLock {
                slot.connection?.close()
                slot.connection = nil
            }
        }
    }

    /// Closes every connection, waiting for reads in progress to finish. Later reads throw `.closed`.
    func close() {
        for slot in slots {
            slot.lock.withLock {
                slot.isClosed = true
                slot.connection?.close()
                slot.connection = nil
            }
        }
    }
}

/// One read-only connection of the pool, with its read statements prepared.
final class ReadConnection {
    let database: Database
    let selectValue: Statement
    let selectMetadata: Statement
    let generation: Int

    init(path: String, busyTimeout: Double, generation: Int) throws {
        database = try Database(path: path, busyTimeout: busyTimeout, create: false, readOnly: true)
        do {
            // As the store's connection: a page read from the OS costs a 16 KiB copy.
            try database.execute("PRAGMA cache_size = -16384")
            selectValue = try database.statement(Manifest.selectValue)
            selectMetadata = try database.statement(Manifest.selectMetadata)
        } catch {
            database.close()
            throw error
        }
        self.generation = generation
    }

    func close() { database.close() }
}
