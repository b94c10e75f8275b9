import KVCacheTestSupport
import Foundation
import Testing
@testable import KVCache

/// The WAL lost or damaged: deleted while closed (a store copied or restored
/// without it), replaced by garbage, deleted while open. The store opens, keeps
/// what its main file holds, and stays consistent (no row without its file after
/// the sweep, stats equal to a recount); nothing torn is ever read.
@Suite struct LostJournalTests {
    /// Writes batch A (flushed and checkpointed into the main file) and batch B
    /// (committed, only in the WAL), then copies the directory as it is on disk.
    func storeWithCommitsOnlyInTheWAL() throws -> (copy: TemporaryDirectory, cleanup: () -> Void) {
        let dir = TemporaryDirectory("journal")
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        for index in 0..<20 {
            let key = "a\(index)"
            try cache.setValue(CheckedValue.make(key: key, seq: 1, size: index % 2 == 0 ? 300 : 30_000), forKey: key)
        }
        try cache.flush()
        // A reader whose snapshot predates B: no checkpoint can copy B's frames into
        // the main file (a background checkpoint may start at any time, e.g. on a
        // disk with little free space), so B stays in the WAL alone.
        let reader = try Database(path: dir.manifestPath, busyTimeout: 5)
        // flush()'s checkpoint is best effort (a background one may hold the lock):
        // A goes into the main file for certain here.
        cache.waitForBackgroundWork()
        _ = try reader.integer("PRAGMA wal_checkpoint(TRUNCATE)")
        try reader.execute("BEGIN")
        _ = try reader.integer("SELECT count(*) FROM manifest")
        for index in 0..<20 {
            let key = "b\(index)"
            try cache.setValue(CheckedValue.make(key: key, seq: 2, size: index % 2 == 0 ? 300 : 30_000), forKey: key)
        }
        cache.waitForBackgroundWork()  // commits B
        let copy = TemporaryDirectory("journalcopy")
        try FileManager.default.copyItem(at: dir.url, to: copy.url)
        #expect((fileSize(copy.manifestPath + "-wal") ?? 0) > 0)
        try reader.execute("ROLLBACK")
        reader.close()
        try cache.close()
        return (copy, { dir.remove(); copy.remove() })
    }

    func checkIntact(_ dir: TemporaryDirectory, expectB: Bool?) throws {
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        _ = try cache.sweepOrphans(gracePeriod: .seconds(0))
        cache.waitForBackgroundWork()
        for index in 0..<20 {
            let key = "a\(index)"
            #expect(try cache.value(forKey: key).flatMap { CheckedValue.seq(of: $0, key: key) } == 1)
        }
        for index in 0..<20 {
            let key = "b\(index)"
            let data = try cache.value(forKey: key)
            if let data { #expect(CheckedValue.seq(of: data, key: key) == 2) }
            if let expectB { #expect((data != nil) == expectB, "\(key)") }
        }
        #expect(cache.statistics.brokenEntries == 0)
        try cache.setValue(bytes(30_000), forKey: "after")
        #expect(try cache.value(forKey: "after") == bytes(30_000))
        try cache.close()
        #expect(try storeProblems(dir).isEmpty)
    }

    @Test func aDeletedWALLosesOnlyItsCommitsAndTheirFilesAreSwept() throws {
        let (copy, cleanup) = try storeWithCommitsOnlyInTheWAL()
        defer { cleanup() }
        unlink(copy.manifestPath + "-wal")
        unlink(copy.manifestPath + "-shm")
        try checkIntact(copy, expectB: false)
    }

    @Test func aWALOverwrittenWithGarbageIsIgnored() throws {
        let (copy, cleanup) = try storeWithCommitsOnlyInTheWAL()
        defer { cleanup() }
        let size = Int(fileSize(copy.manifestPath + "-wal")!)
        try Data(repeating: 0xa5, count: size).write(to: URL(fileURLWithPath: copy.manifestPath + "-wal"))
        unlink(copy.manifestPath + "-shm")
        try checkIntact(copy, expectB: false)
    }

    @Test func theWALWithItsCommitsIsReplayed() throws {
        let (copy, cleanup) = try storeWithCommitsOnlyInTheWAL()
        defer { cleanup() }
        try Data(repeating: 0xa5, count: 32_768).write(to: URL(fileURLWithPath: copy.manifestPath + "-shm"))
        try checkIntact(copy, expectB: true)
    }

    @Test func aWALDeletedWhileOpenNeverYieldsTornValues() throws {
        let dir = TemporaryDirectory("journalopen")
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        for index in 0..<20 {
            let key = "a\(index)"
            try cache.setValue(CheckedValue.make(key: key, seq: 1, size: index % 2 == 0 ? 300 : 30_000), forKey: key)
        }
        try cache.flush()
        #expect(unlink(dir.manifestPath + "-wal") == 0)
        for index in 0..<20 {
            let key = "b\(index)"
            try cache.setValue(CheckedValue.make(key: key, seq: 2, size: index % 2 == 0 ? 300 : 30_000), forKey: key)
        }
        try cache.flush()
        for index in 0..<20 {
            let key = "b\(index)"
            #expect(try cache.value(forKey: key).flatMap { CheckedValue.seq(of: $0, key: key) } == 2)
        }
        try cache.close()
        // SQLite still held the deleted WAL open and checkpointed it at close: nothing is lost.
        try checkIntact(dir, expectB: nil)
    }
}
