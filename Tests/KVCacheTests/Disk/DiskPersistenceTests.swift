import Foundation
import Testing
@testable import KVCache

@Suite struct DiskPersistenceTests {
    @Test(arguments: [DiskCache.Durability.committed, .synced])
    func flushedWritesAreVisibleToAnotherConnection(durability: DiskCache.Durability) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(3600) })
        try cache.setValue(bytes(10), forKey: "a")
        try cache.setValue(bytes(30_000), forKey: "file")
        // Readable at once in this process, before any commit.
        #expect(try cache.value(forKey: "a") == bytes(10))
        #expect(try rawRows(dir.manifestPath, "SELECT count(*) FROM manifest") == [["0"]])
        try cache.flush(durability: durability)
        #expect(try rawRows(dir.manifestPath, "SELECT count(*) FROM manifest") == [["2"]])
        #expect(cache.statistics.commits == 1)
    }

    @Test func groupCommitCommitsOnItsOwnAfterTheDelay() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(0.001) })
        try await cache.setValue(bytes(10), forKey: "a")
        // No other call follows: only the timer can commit. Wait for it to run out
        // of work (not for `statistics`, which would commit the write itself).
        cache.commitThread.waitUntilIdle()
        #expect(try rawRows(dir.manifestPath, "SELECT key FROM manifest") == [["a"]])
    }

    @Test func pendingWritesDoNotHoldTheDatabaseLockAgainstOtherWriters() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(3600) })
        try cache.setValue(bytes(10), forKey: "a")
        // Stands in for another process: it must get the write lock at once.
        let other = try Database(path: dir.manifestPath, busyTimeout: 0)
        try other.execute("""
            BEGIN IMMEDIATE;
            INSERT INTO manifest(key, size, modification_time, last_access_time, inline_data)
                VALUES ('b', 1, 0, 0, x'01');
            UPDATE stats SET count = count + 1, size = size + 1;
            COMMIT;
            """)
        other.close()
        try cache.flush()
        #expect(try cache.totalCount == 2)
        #expect(try cache.totalSize == 11)
        #expect(try cache.value(forKey: "b") == Data([1]))
        #expect(try cache.value(forKey: "a") == bytes(10))
    }

    @Test func aFullBatchCommitsImmediately() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // Quietly: the open-time sweep's follow-ups would start a commit of the writes
        // still pending after the check below.
        let cache = try DiskCache.openedQuietly(dir) {
            $0.groupCommitDelay = .seconds(3600)
            $0.groupCommitMaxWrites = 10
        }
        for index in 0..<25 { try cache.setValue(bytes(10), forKey: "k\(index)") }
        // A batch may be committing off the lock: wait for it (no timer involved).
        cache.settleCommit()
        let pending = cache.groupCommitState.pendingWrites
        // Batches start early (from a quarter of the buffer), and a full one never waits:
        // a set finding the buffer full commits it first. With the batch in flight
        // stalled (a loaded machine), the buffer behind it fills up to, not past, the bound.
        #expect(pending <= 10)
        let committed = 25 - pending
        #expect(try rawRows(dir.manifestPath, "SELECT count(*) FROM manifest") == [["\(committed)"]])
        #expect(try rawRows(dir.manifestPath, "SELECT count, size FROM stats") == [["\(committed)", "\(committed * 10)"]])
    }

    @Test func aCommitInsertsRowsInTheOrderTheirKeysWereWritten() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(3600) })
        // Not in key order, and enough keys that a hash order would not match by chance.
        let keys = (0..<40).map { "key-\(($0 * 7) % 40)" }
        for key in keys { try cache.setValue(bytes(10), forKey: key) }
        try cache.flush()
        #expect(try rawRows(dir.manifestPath, "SELECT key FROM manifest ORDER BY rowid") == keys.map { [$0] })
    }

    @Test func aSecondInstanceOnTheSameDirectoryIsRefused() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        #expect(throws: KVCacheError.self) { _ = try DiskCache(directory: dir.url, configuration: .testing()) }
        // Another spelling of the same path is the same directory.
        let other = URL(fileURLWithPath: dir.path + "/data/..")
        #expect(throws: KVCacheError.self) { _ = try DiskCache(directory: other, configuration: .testing()) }
        try cache.close()
        let reopened = try DiskCache(directory: dir.url, configuration: .testing())
        try reopened.close()
    }

    @Test func anUnusableDirectoryThrowsATypedError() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        let blocker = dir.url.appendingPathComponent("file")
        try Data().write(to: blocker)
        #expect(throws: KVCacheError.self) { _ = try DiskCache(directory: blocker, configuration: .testing()) }
        #expect(fileSize(blocker.path) == 0)
    }

    @Test func totalsComeFromTheStatsRowAndMatchARecount() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        for index in 0..<300 {
            try cache.setValue(bytes(index * 150), forKey: "k\(index % 120)")
            if index % 7 == 0 { try cache.removeValue(forKey: "k\((index + 3) % 120)") }
        }
        _ = try cache.trim(toCount: 90)
        let count = try cache.totalCount, size = try cache.totalSize
        try cache.close()
        let rows = try rawRows(dir.manifestPath, "SELECT count(*), sum(size), count(filename) FROM manifest")
        #expect(rows == [["\(count)", "\(size)", rows[0][2]]])
        let stats = try rawRows(dir.manifestPath, "SELECT count, size, file_count FROM stats")
        #expect(stats == rows)
        let reopened = try DiskCache(directory: dir.url, configuration: .testing())
        #expect(try reopened.totalCount == count)
        #expect(try reopened.totalSize == size)
    }

    @Test func statementsAreReusedAndResetUnderManyOperations() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // The orphan sweep started at open prepares its statement only if it finds
        // files: let it finish on the empty store, or it may do so in round two.
        let cache = try DiskCache.openedQuietly(dir)
        func statementCounts() -> (cached: Int, busy: Int) {
            cache.statementCounts
        }
        func workload(_ round: Int) throws {
            for index in 0..<500 {
                let key = "k\(index % 100)"
                try cache.setValue(bytes(index % 3 == 0 ? 25_000 : 100), forKey: key, expiration: .after(.seconds(1000)))
                _ = try cache.value(forKey: key)
                _ = try cache.contains(key)
                _ = try cache.extendedData(forKey: key)
                if index % 10 == 0 { try cache.removeValue(forKey: key) }
            }
            // Reads of committed rows, every round (just-set keys are found in memory,
            // and whether a commit lands between a set and a read is timing).
            try cache.flush(durability: .committed)
            for index in 0..<10 { _ = try cache.extendedData(forKey: "k\(index)") }
            _ = try cache.keys(limit: 10)
            _ = try cache.trim(toCount: 50)
            _ = try cache.removeExpired()
            try cache.flush()
        }
        try workload(0)
        let after = statementCounts()
        #expect(after.busy == 0)
        try workload(1)
        #expect(statementCounts().cached == after.cached)
        #expect(statementCounts().busy == 0)
    }

    @Test func walStaysBoundedUnderALongWriteLoop() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        let value = bytes(10_000)
        var largest: Int64 = 0
        for index in 0..<4_000 {
            try cache.setValue(value, forKey: "k\(index % 500)")
            if index % 50 == 0 {
                _ = try cache.value(forKey: "k\(index % 500)")
                largest = max(largest, fileSize(dir.manifestPath + "-wal") ?? 0)
            }
        }
        try cache.flush()
        largest = max(largest, fileSize(dir.manifestPath + "-wal") ?? 0)
        // ~40 MB written; the WAL stays within checkpoint interval + one batch.
        #expect(largest > 0)
        #expect(largest < 16 << 20, "WAL grew to \(largest) bytes")
        // The checkpoints ran in the background, not inside commits.
        cache.waitForBackgroundWork()
        #expect(cache.checkpointer?.completedCheckpoints ?? 0 > 0)
    }

    @Test func walStaysBoundedWhenTheBackgroundCheckpointerIsStopped() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        // Closed: it schedules nothing, so only the commits' own checkpoint (twice
        // times the soft limit) keeps the WAL bounded.
        let checkpointer = try #require(cache.checkpointer)
        checkpointer.close()
        let value = bytes(10_000)
        var largest: Int64 = 0
        for index in 0..<4_000 {
            try cache.setValue(value, forKey: "k\(index % 500)")
            if index % 50 == 0 { largest = max(largest, fileSize(dir.manifestPath + "-wal") ?? 0) }
        }
        try cache.flush()
        largest = max(largest, fileSize(dir.manifestPath + "-wal") ?? 0)
        #expect(checkpointer.completedCheckpoints == 0)
        #expect(largest > 4 << 20, "the soft limit alone should not have checkpointed: \(largest) bytes")
        #expect(largest < 20 << 20, "WAL grew to \(largest) bytes")
        for index in 0..<500 { #expect(try cache.value(forKey: "k\(index)") == value) }
    }
}
