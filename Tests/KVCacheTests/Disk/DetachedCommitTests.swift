import Foundation
import Testing
@testable import KVCache

/// Group commits that run on the second connection, off the cache's lock: what
/// readers see while a batch is in flight, and what happens when it fails.
@Suite struct DetachedCommitTests {
    /// A cache whose commits happen only when the test says so.
    func makeCache(_ dir: TemporaryDirectory, busyTimeout: Duration = .seconds(5)) throws -> DiskCache {
        try DiskCache.openedQuietly(dir) {
            $0.groupCommitDelay = .seconds(3600)
            $0.busyTimeout = busyTimeout
        }
    }

    func detach(_ cache: DiskCache) throws -> (DetachedCommit, CommitConnection) {
        try #require(try cache.detachCommitWithoutStarting())
    }

    func manifestKeys(_ dir: TemporaryDirectory) throws -> [String?] {
        try rawRows(dir.manifestPath, "SELECT key FROM manifest ORDER BY key").map { $0[0] }
    }

    @Test func writesInFlightAreReadableAndNewerWritesWinOverThem() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        try cache.setValue(bytes(10, seed: 1), forKey: "a")
        try cache.setValue(bytes(30_000, seed: 2), forKey: "file")
        try cache.setValue(bytes(10, seed: 3), forKey: "gone")
        let (batch, connection) = try detach(cache)

        // Handed over, not committed: this process still reads them.
        #expect(try manifestKeys(dir).isEmpty)
        #expect(try cache.value(forKey: "a") == bytes(10, seed: 1))
        #expect(try cache.value(forKey: "file") == bytes(30_000, seed: 2))
        #expect(try cache.contains("gone"))
        // Newer writes go to the next batch and win over the one in flight.
        try cache.setValue(bytes(10, seed: 4), forKey: "a")
        try cache.removeValue(forKey: "gone")
        #expect(try cache.value(forKey: "a") == bytes(10, seed: 4))
        #expect(try cache.value(forKey: "gone") == nil)

        batch.apply(on: connection, extendsExpirationOnAccess: false)
        #expect(try manifestKeys(dir) == ["a", "file", "gone"])
        #expect(try cache.value(forKey: "a") == bytes(10, seed: 4))
        #expect(try cache.value(forKey: "gone") == nil)

        try cache.flush()
        #expect(try manifestKeys(dir) == ["a", "file"])
        #expect(try cache.totalCount == 2)
        #expect(try cache.totalSize == 30_010)
        #expect(cache.statistics.commits == 2)
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
    }

    @Test func theOrphanSweepKeepsTheFilesOfABatchInFlight() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir)
        try cache.setValue(bytes(30_000, seed: 5), forKey: "file")
        let (batch, connection) = try detach(cache)
        #expect(try cache.sweepOrphans(gracePeriod: .seconds(0)) == 0)
        batch.apply(on: connection, extendsExpirationOnAccess: false)
        #expect(try cache.sweepOrphans(gracePeriod: .seconds(0)) == 0)
        #expect(dir.dataFiles().count == 1)
        #expect(try cache.value(forKey: "file") == bytes(30_000, seed: 5))
    }

    @Test func aBusyBatchGoesBackUnderNewerWritesAndCommitsLater() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try makeCache(dir, busyTimeout: .seconds(0))
        try cache.setValue(bytes(10, seed: 1), forKey: "a")
        try cache.setValue(bytes(30_000, seed: 2), forKey: "b")
        try cache.setValue(bytes(30_000, seed: 3), forKey: "c")
        let (batch, connection) = try detach(cache)
        try cache.setValue(bytes(10, seed: 4), forKey: "c")  // replaces the in-flight file value

        // Stands in for another process holding the write lock.
        let other = try Database(path: dir.manifestPath, busyTimeout: 0)
        try other.execute("BEGIN IMMEDIATE")
        batch.apply(on: connection, extendsExpirationOnAccess: false)
        cache.settleCommit()
        #expect(cache.statistics.failedCommits == 1)
        try other.execute("ROLLBACK")
        other.close()

        // Nothing lost, nothing stale: the batch's "c" file was superseded and deleted.
        #expect(try cache.value(forKey: "a") == bytes(10, seed: 1))
        #expect(try cache.value(forKey: "c") == bytes(10, seed: 4))
        try cache.flush()
        #expect(try manifestKeys(dir) == ["a", "b", "c"])
        #expect(dir.dataFiles().count == 1)
        #expect(try cache.value(forKey: "b") == bytes(30_000, seed: 2))
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
    }

    @Test func aFullBufferBehindABatchInFlightWaitsForItThenCommits() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache.openedQuietly(dir) {
            $0.groupCommitDelay = .seconds(3600)
            $0.groupCommitMaxWrites = 10
        }
        try cache.setValue(bytes(10), forKey: "first")
        let (batch, connection) = try detach(cache)
        // While a batch is in flight, no other starts: the buffer fills to its bound.
        for index in 0..<10 { try cache.setValue(bytes(10), forKey: "k\(index)") }
        #expect(cache.groupCommitState.pendingWrites == 10)
        #expect(try manifestKeys(dir).isEmpty)

        // The next set waits for the batch in flight, then hands the full buffer over.
        let applied = Thread { batch.apply(on: connection, extendsExpirationOnAccess: false) }
        applied.start()
        try cache.setValue(bytes(10), forKey: "k10")
        cache.settleCommit()
        let pending = cache.groupCommitState.pendingWrites
        #expect(pending == 1)
        #expect(try rawRows(dir.manifestPath, "SELECT count(*) FROM manifest") == [["11"]])
        // Statistics count the pending "k10" without committing it.
        let statistics = cache.statistics
        #expect(statistics.commits == 2 && statistics.failedCommits == 0)
        #expect(statistics.count == 12)
        try cache.flush()
        #expect(cache.statistics.commits == 3 && cache.statistics.count == 12)
    }

    @Test func closingSettlesABatchStillBeingCommitted() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        do {
            let cache = try makeCache(dir)
            for index in 0..<100 { try cache.setValue(bytes(100, seed: UInt8(index)), forKey: "k\(index)") }
            let (batch, connection) = try detach(cache)
            try cache.setValue(bytes(100), forKey: "after")
            // The commit finishes on another thread while close waits for it.
            let applied = Thread { batch.apply(on: connection, extendsExpirationOnAccess: false) }
            applied.start()
            try cache.close()
        }
        let reopened = try makeCache(dir)
        #expect(try reopened.totalCount == 101)
        #expect(try reopened.value(forKey: "k42") == bytes(100, seed: 42))
        #expect(try reopened.value(forKey: "after") == bytes(100))
    }
}

/// Who starts and settles group commits: callers while they keep calling, the
/// timer once they stop.
@Suite struct GroupCommitSchedulingTests {
    @Test func aCallPastTheDeadlineHandsThePendingWritesOverItself() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // Every deadline has passed by the time the call's follow-ups run.
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(0) })
        try cache.setValue(bytes(10, seed: 1), forKey: "a")
        let state = cache.groupCommitState
        #expect(state.pendingWrites == 0)
        let batch = state.batchInFlight
        // Applied (or already settled by the timer): the row is committed.
        if let batch { _ = batch.waitUntilApplied() }
        #expect(try rawRows(dir.manifestPath, "SELECT key FROM manifest") == [["a"]])
        // Reads do not settle it (they never take the store's lock); the next write does.
        #expect(try cache.contains("a"))
        try cache.removeValue(forKey: "absent")
        #expect(cache.groupCommitState.batchInFlight == nil)
        #expect(cache.statistics.commits == 1)
    }

    @Test func aQuarterOfAFullBufferStartsACommitBeforeTheDelay() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // No deadline falls due in this test: only the burst's size can start a commit.
        let cache = try DiskCache.openedQuietly(dir) {
            $0.groupCommitDelay = .seconds(3600)
            $0.groupCommitMaxWrites = 8
        }
        try cache.setValue(bytes(10, seed: 1), forKey: "a")
        #expect(cache.groupCommitState.pendingWrites == 1)
        #expect(cache.groupCommitState.batchInFlight == nil)
        try cache.setValue(bytes(10, seed: 2), forKey: "b")
        let state = cache.groupCommitState
        #expect(state.pendingWrites == 0)
        let batch = state.batchInFlight
        #expect(batch != nil)
        if let batch { _ = batch.waitUntilApplied() }
        #expect(try rawRows(dir.manifestPath, "SELECT key FROM manifest ORDER BY key") == [["a"], ["b"]])
    }

    @Test func aQuarterOfTheBufferBytesStartsACommitBeforeTheDelay() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache.openedQuietly(dir) {
            $0.groupCommitDelay = .seconds(3600)
            $0.storageMode = .inline
        }
        // The buffer holds 4 MiB of inline bytes: one value of a quarter of that is enough.
        try cache.setValue(bytes(1 << 20, seed: 1), forKey: "large")
        let batch = cache.groupCommitState.batchInFlight
        #expect(batch != nil)
        if let batch { _ = batch.waitUntilApplied() }
        #expect(try rawRows(dir.manifestPath, "SELECT key FROM manifest") == [["large"]])
    }

    @Test func aFullAccessTimeBufferIsWrittenOffTheLock() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        // No group-commit deadline falls due in this test, so nothing settles the batch.
        let cache = try DiskCache.openedQuietly(dir) {
            $0.clock = clock.function
            $0.groupCommitDelay = .seconds(3600)
        }
        let limit = cache.configuration.storageOptions.accessBufferLimit
        for index in 0..<limit { try cache.setValue(bytes(10), forKey: "k\(index)") }
        try cache.flush()
        clock.advance(by: 100)
        for index in 0..<limit { _ = try cache.value(forKey: "k\(index)") }
        // The last read filled the buffer: the commit thread hands it over as a batch...
        let flushed = DispatchSemaphore(value: 0)
        cache.commitThread.async { flushed.signal() }  // runs after the flush it queued
        flushed.wait()
        let state = cache.groupCommitState
        #expect(state.bufferedAccessTimes == 0)
        let batch = state.batchInFlight
        #expect(batch?.accessTimes.count == limit)
        // ...which the commit connection writes.
        if let batch { _ = batch.waitUntilApplied() }
        let stamped = try rawRows(dir.manifestPath, "SELECT count(*) FROM manifest WHERE last_access_time > modification_time")
        #expect(stamped == [["\(limit)"]])
    }

    @Test func whenCallsStopTheTimerCommitsAndSettlesTheWrites() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(0.002) })
        try cache.setValue(bytes(10, seed: 1), forKey: "a")
        try cache.setValue(bytes(30_000, seed: 2), forKey: "b")
        // The timer has nothing left to do only once the batch is committed and settled.
        cache.commitThread.waitUntilIdle()
        #expect(cache.groupCommitState.pendingWrites == 0)
        #expect(cache.groupCommitState.batchInFlight == nil)
        #expect(try rawRows(dir.manifestPath, "SELECT key FROM manifest ORDER BY key") == [["a"], ["b"]])
        // One batch, or two when the timer committed "a" before "b" came (a loaded
        // machine can stall 2 ms between the two calls): each one settled, none failed.
        #expect((1...2).contains(cache.statistics.commits))
        #expect(cache.statistics.failedCommits == 0)
    }
}
