import Foundation

/// Read-only connections to the manifest, one per concurrent reader (up to a
/// fixed count), opened on first use. In WAL mode each read gets its own snapshot
/// and runs beside the commit, the checkpoint and other readers: none of them
/// takes the store's lock or waits for SQLite's write lock.
final class ReadConnectionPool: @unchecked Sendable {
    let path: String
    let capacity: Int
    private let busyTimeout: Double
    private let mutex = PThreadMutex()
    private let returned = Condition()
    private var idle: [ReadConnection] = []
    /// Connections open, idle or in use.
    private var openCount = 0
    private var inUse = 0
    /// Bumped when the manifest is replaced (a rebuild): older connections are closed on return.
    private(set) var generation = 0
    private var isClosed = false

    init(path: String, capacity: Int, busyTimeout: Double) {
        self.path = path
        self.capacity = max(1, capacity)
        self.busyTimeout = busyTimeout
    }

    /// The generation of the manifest file the connections read.
    var currentGeneration: Int { mutex.withLock { generation } }

    /// Runs `body` on a connection of its own; waits only while every connection is
    /// busy with another read. Throws `KVCacheError.closed` once the pool is closed.
    func withConnection<Result>(_ body: (ReadConnection) throws -> Result) throws -> Result {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    private func checkOut() throws -> ReadConnection {
        mutex.lock()
        while true {
            if isClosed {
                mutex.unlock()
                throw KVCacheError.closed
            }
            if let connection = idle.popLast() {
                inUse += 1
                mutex.unlock()
                return connection
            }
            if openCount < capacity { break }
            returned.wait(on: mutex, until: nil)
        }
        openCount += 1
        inUse += 1
        let generation = generation
        mutex.unlock()
        do {
            return try ReadConnection(path: path, busyTimeout: busyTimeout, generation: generation)
        } catch {
            mutex.withLock {
                openCount -= 1
                inUse -= 1
            }
            returned.signal()
            throw error
        }
    }

    private func checkIn(_ connection: ReadConnection) {
        let keep = mutex.withLock { () -> Bool in
            inUse -= 1
            let keep = !isClosed && connection.generation == generation
            if keep { idle.append(connection) } else { openCount -= 1 }
            return keep
        }
        if !keep { connection.close() }
        returned.broadcast()
    }

    /// After the manifest was replaced: idle connections close now, busy ones when returned.
    func invalidate() {
        let stale = mutex.withLock { () -> [ReadConnection] in
            generation += 1
            defer { idle.removeAll() }
            openCount -= idle.count
            return idle
        }
        for connection in stale { connection.close() }
    }

    /// Closes every connection, waiting for reads in progress to finish. Later reads throw `.closed`.
    func close() {
        mutex.lock()
        isClosed = true
        while inUse > 0 { returned.wait(on: mutex, until: nil) }
        let connections = idle
        idle.removeAll()
        openCount = 0
        mutex.unlock()
        for connection in connections { connection.close() }
        returned.broadcast()
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
            try database.execute("PRAGMA cache_size = -4096")
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
