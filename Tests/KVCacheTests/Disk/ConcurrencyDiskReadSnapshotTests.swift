import Dispatch
import Foundation
import Testing
@testable import KVCache

/// A read connection keeps its read transaction open between reads while the
/// WAL-index header is unchanged (ReadConnection): a read must still see every
/// commit made before it, by this store or another connection (another process),
/// and an idle snapshot must end so checkpoints can pass it.
@Suite struct ConcurrencyDiskReadSnapshotTests {
    /// One read connection, "K" committed and read once (its snapshot is open). The
    /// pool's idle pass is held until `releaseIdlePass()`, so no snapshot ends by itself.
    struct Reading {
        let dir = TemporaryDirectory()
        let cache: DiskCache
        let other: Database
        private let idlePassMayRun = DispatchSemaphore(value: 0)

        init() throws {
            cache = try DiskCache(directory: dir.url, configuration: .testing { $0.readConnections = 1 })
            cache.reader.pool.idlePassWillRun = { [idlePassMayRun] in
                idlePassMayRun.wait()
                idlePassMayRun.signal()
            }
            try cache.setValue(bytes(100, seed: 1), forKey: "K")
            try cache.setValue(bytes(100, seed: 5), forKey: "L")
            try cache.flush()
            #expect(try cache.value(forKey: "K") == bytes(100, seed: 1))
            #expect(try cache.value(forKey: "K") == bytes(100, seed: 1))
            #expect(cache.reader.pool.openSnapshotCount == 1)
            other = try Database(path: dir.manifestPath, busyTimeout: 0)
        }

        /// Rewrites K's inline value on the other connection, as another process would.
        func rewriteK(seed: UInt8) throws {
            try other.statement("UPDATE manifest SET inline_data = ?1 WHERE key = 'K'").run { statement in
                try statement.bind(bytes(100, seed: seed), at: 1)
                try statement.execute()
            }
        }

        /// `wal_checkpoint(TRUNCATE)` on the other connection: true if no reader held it back.
        func checkpointTruncates() throws -> Bool {
            try other.statement("PRAGMA wal_checkpoint(TRUNCATE)").run { statement in
                _ = try statement.step()
                return statement.int64(at: 0) == 0
            }
        }

        func releaseIdlePass() { idlePassMayRun.signal() }

        func remove() {
            releaseIdlePass()
            other.close()
            try? cache.close()
            dir.remove()
        }
    }

    /// Fails if the open snapshot is reused without checking the header: K stays 1.
    @Test func aReadSeesAnotherConnectionsCommitMadeWhileItsSnapshotWasOpen() throws {
        let reading = try Reading()
        defer { reading.remove() }
        try reading.rewriteK(seed: 2)
        #expect(try reading.cache.value(forKey: "K") == bytes(100, seed: 2))
        try reading.other.execute("DELETE FROM manifest WHERE key = 'K'")
        #expect(try reading.cache.value(forKey: "K") == nil)
        #expect(try !reading.cache.contains("K"))
        #expect(try reading.cache.value(forKey: "L") == bytes(100, seed: 5))
    }

    /// The same after the WAL was checkpointed and reset, which rewrites the header's salts.
    @Test func aReadSeesACommitAfterTheWALWasReset() throws {
        let reading = try Reading()
        defer { reading.remove() }
        reading.cache.reader.pool.endIdleSnapshots()
        reading.cache.reader.pool.endIdleSnapshots()
        #expect(try reading.checkpointTruncates())
        #expect(try reading.cache.value(forKey: "K") == bytes(100, seed: 1))
        try reading.rewriteK(seed: 3)
        #expect(try reading.cache.value(forKey: "K") == bytes(100, seed: 3))
    }

    /// This store's own commits: a removal and a set leave the buffer only after
    /// their commit, which changed the header, so the next read begins a new snapshot.
    @Test func aReadSeesThisStoresCommitsThroughAnOpenSnapshot() throws {
        let reading = try Reading()
        defer { reading.remove() }
        let cache = reading.cache
        try cache.setValue(bytes(100, seed: 7), forKey: "K")
        try cache.removeValue(forKey: "L")
        try cache.flush()
        #expect(try cache.value(forKey: "K") == bytes(100, seed: 7))
        #expect(try cache.value(forKey: "L") == nil)
        try cache.removeAll()
        #expect(try cache.value(forKey: "K") == nil)
    }

    /// A snapshot left open by the last read holds back a truncating checkpoint
    /// until the pool's idle pass ends it; the pass runs by itself.
    @Test func theIdlePassEndsAnUnusedSnapshotSoACheckpointCompletes() throws {
        let reading = try Reading()
        defer { reading.remove() }
        let ended = DispatchSemaphore(value: 0)
        reading.cache.reader.pool.idlePassDidRun = { remaining in if remaining == 0 { ended.signal() } }
        try reading.rewriteK(seed: 4)
        #expect(try !reading.checkpointTruncates())  // the reader's snapshot predates the rewrite
        reading.releaseIdlePass()
        #expect(ended.wait(timeout: .now() + 30) == .success)
        #expect(reading.cache.reader.pool.openSnapshotCount == 0)
        #expect(try reading.checkpointTruncates())
        #expect(try reading.cache.value(forKey: "K") == bytes(100, seed: 4))
    }

    /// A snapshot in use is not ended by an idle pass; one pass with no read since ends it.
    @Test func anIdlePassKeepsASnapshotUsedSinceTheLastPass() throws {
        let reading = try Reading()
        defer { reading.remove() }
        let pool = reading.cache.reader.pool
        #expect(pool.endIdleSnapshots() == 1)  // used by the reads in init
        #expect(pool.openSnapshotCount == 1)
        #expect(try reading.cache.value(forKey: "L") == bytes(100, seed: 5))
        #expect(pool.endIdleSnapshots() == 1)
        #expect(pool.endIdleSnapshots() == 0)
        #expect(pool.openSnapshotCount == 0)
    }

    /// Plain hits and misses are counted on their read connection: the counts
    /// survive the connection's close (a rebuild replaces every connection).
    @Test func hitsCountedOnAConnectionSurviveItsClose() throws {
        let reading = try Reading()
        defer { reading.remove() }
        let cache = reading.cache
        #expect(try cache.value(forKey: "nothing") == nil)
        let before = cache.statistics
        #expect(before.hits == 2 && before.misses == 1)
        cache.reader.pool.invalidate()
        #expect(cache.statistics.hits == 2 && cache.statistics.misses == 1)
        #expect(try cache.value(forKey: "L") == bytes(100, seed: 5))
        #expect(cache.statistics.hits == 3)
    }
}
