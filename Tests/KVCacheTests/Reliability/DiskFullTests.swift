import KVCacheTestSupport
import Foundation
import Testing
@testable import KVCache

/// A 4 MB tmpfs, half of it taken by another file, filled up: inline writes (buffered, committed in the background),
/// file writes, and a write that fills the disk halfway through a value file. The
/// caller gets `KVCacheError.diskFull` — at the latest on the write after a failed
/// background commit, and from `flush()` — and everything flushed before stays
/// readable, also after a reopen and after space is freed.
@Suite(.blockingOnItsOwnThread, .serialized, .enabled(if: TmpfsMount.isAvailable)) struct DiskFullTests {
    static let earlier = (0..<10).map { "early\($0)" }

    /// Opens a cache on a fresh tmpfs with 2 MB free and stores (and flushes) `earlier`.
    /// (2 MB: a new store with 16 KiB pages takes a few hundred KB before any value.)
    func withFullDisk(_ configure: (inout DiskCache.Configuration) -> Void = { _ in },
                      _ body: (DiskCache, URL) throws -> Void) throws {
        let mount = try TmpfsMount(size: "4m")
        defer { mount.unmount() }
        let url = URL(fileURLWithPath: mount.path + "/cache")
        // Space another program holds (half the disk); a test frees it by deleting the file.
        try Data(repeating: 1, count: 2 * 1024 * 1024).write(to: URL(fileURLWithPath: mount.path + "/ballast"))
        let configuration = DiskCache.Configuration.testing(configure)
        do {
            let cache = try DiskCache(directory: url, configuration: configuration)
            for (index, key) in Self.earlier.enumerated() {
                try cache.setValue(CheckedValue.make(key: key, seq: 1, size: index % 2 == 0 ? 500 : 25_000), forKey: key)
            }
            try cache.flush()
            try body(cache, url)
            try cache.close()
        }
        // Reopening on the still-full disk works, or fails with diskFull (SQLite may need
        // room for its shared-memory file); once space is freed, the flushed entries are intact.
        do {
            try Self.checkEarlierEntries(url, configuration)
        } catch let error as KVCacheError {
            guard error.code == .diskFull else { throw error }
        }
        unlink(mount.path + "/ballast")
        try Self.checkEarlierEntries(url, configuration)
    }

    static func checkEarlierEntries(_ url: URL, _ configuration: DiskCache.Configuration) throws {
        let cache = try DiskCache(directory: url, configuration: configuration)
        for key in Self.earlier {
            #expect(try cache.value(forKey: key).flatMap { CheckedValue.seq(of: $0, key: key) } == 1, "\(key)")
        }
        try cache.close()
    }

    /// Calls `write(index)` until it throws (at most `limit` times); returns the error and the index.
    func writeUntilError(limit: Int, _ write: (Int) throws -> Void) -> (error: Error?, index: Int) {
        for index in 0..<limit {
            do { try write(index) } catch { return (error, index) }
        }
        return (nil, limit)
    }

    @Test func inlineWritesInALoopGetDiskFullSoonAndFlushedEntriesSurvive() throws {
        try withFullDisk({ $0.groupCommitDelay = .seconds(0) }) { cache, _ in
            // 2 MB holds at most 500 such values, fewer than one commit batch (512).
            let (error, index) = writeUntilError(limit: 2_000) { index in
                try cache.setValue(bytes(4_000, seed: UInt8(index % 256)), forKey: "fill\(index)")
            }
            #expect(error as? KVCacheError == .diskFull(path: cache.directory.path + "/manifest.sqlite"),
                    "after \(index) writes: \(String(describing: error))")
            // Usually a few writes after the first failed commit. Under heavy load the
            // commit thread may lag, but at most two buffers' worth of writes are ever
            // uncommitted (the failing batch and a full buffer behind it: 2 × 512).
            #expect(index <= 500 + 2 * 512, "the disk was full long before write \(index) was refused")
            #expect(cache.statistics.failedCommits > 0)
            #expect(throws: KVCacheError.self) { try cache.flush() }
            // Reported once: once space is freed the cache is usable again.
            unlink(cache.directory.deletingLastPathComponent().path + "/ballast")
            #expect(throws: Never.self, "reported once") { try cache.flush() }
            try cache.setValue(bytes(100), forKey: "again")
            try cache.flush()
            #expect(try cache.value(forKey: "again") == bytes(100))
        }
    }

    @Test func aFailedBackgroundCommitIsReportedByTheNextWriteAndByFlush() throws {
        try withFullDisk({
            $0.groupCommitDelay = .seconds(3600)
            $0.groupCommitMaxWrites = 1_000
        }) { cache, url in
            // Buffered only (no commit yet: 40 KB, under the sizes that start a commit early,
            // an eighth of the free space measured at the last commit), so every one of
            // these is acknowledged...
            for index in 0..<10 { try cache.setValue(bytes(4_000, seed: 9), forKey: "fill\(index)") }
            // ...then another program leaves about 10 KB free, which 40 KB cannot commit in...
            let ballast = url.deletingLastPathComponent().path + "/more-ballast"
            let free = try #require(FileManager.default.attributesOfFileSystem(forPath: url.path)[.systemFreeSize] as? Int)
            try Data(repeating: 2, count: max(0, free - 10_000)).write(to: URL(fileURLWithPath: ballast))
            defer { unlink(ballast) }
            // ...and the background commit (here: run by waitForBackgroundWork) fails.
            cache.waitForBackgroundWork()
            let statistics = cache.statistics
            #expect(statistics.failedCommits == 1, "\(statistics)")
            #expect(throws: KVCacheError.self) { try cache.setValue(bytes(10), forKey: "next") }
            // A flush that only commits must not report success after a loss either.
            #expect(throws: KVCacheError.self) { try cache.flush(durability: .committed) }
            #expect(throws: Never.self, "reported once") { try cache.flush() }
            #expect(try cache.value(forKey: "fill0") == nil)
        }
    }

    @Test func fileValuesFillingTheDiskThrowDiskFullAndLeaveNoPartialFile() throws {
        try withFullDisk { cache, url in
            // 300 KB each: the seventh cannot fit, and fails partway through its file.
            let (error, index) = writeUntilError(limit: 20) { index in
                try cache.setValue(CheckedValue.make(key: "big\(index)", seq: 2, size: 300_000), forKey: "big\(index)")
            }
            guard (error as? KVCacheError)?.code == .diskFull else {
                Issue.record("expected diskFull after \(index) writes, got \(String(describing: error))")
                return
            }
            // The manifest may have no room left either: then the flush says so, and the
            // writes it could not commit are dropped with their files. Otherwise every
            // value written before the failure reads back whole. Never a torn value.
            var committed = true
            do {
                try cache.flush()
            } catch let error as KVCacheError {
                guard error.code == .diskFull else { throw error }
                committed = false
            }
            for written in 0..<index {
                let key = "big\(written)"
                let seq = try cache.value(forKey: key).flatMap { CheckedValue.seq(of: $0, key: key) }
                if committed { #expect(seq == 2, "\(key)") } else { #expect(seq == nil || seq == 2, "\(key)") }
            }
            // The failed write left no file behind.
            let rows = try rawRows(url.path + "/manifest.sqlite", "SELECT count(*) FROM manifest WHERE filename IS NOT NULL")
            let files = try FileManager.default.contentsOfDirectory(atPath: url.path + "/data")
            #expect(rows == [[String(files.count)]])
        }
    }

    /// Commits a flush made durable stay in the WAL when a reader holds an older
    /// snapshot; a later flush on a full disk then cannot checkpoint them into the
    /// database file, which would have to grow. They are durable in the WAL, so the
    /// flush succeeds, and they read back, also after a reopen.
    @Test func aFlushWhoseCheckpointFindsTheDiskFullStillSucceeds() throws {
        let mount = try TmpfsMount(size: "4m")
        defer { mount.unmount() }
        let url = URL(fileURLWithPath: mount.path + "/cache")
        do {
            let cache = try DiskCache(directory: url, configuration: .testing())
            let reader = try Database(path: url.path + "/manifest.sqlite", busyTimeout: 5)
            try reader.execute("BEGIN")
            _ = try reader.integer("SELECT count(*) FROM manifest")
            for index in 0..<50 { try cache.setValue(bytes(4_000, seed: UInt8(index)), forKey: "held\(index)") }
            try cache.flush()
            try reader.execute("COMMIT")
            reader.close()
            let walSize = try #require(FileManager.default.attributesOfItem(atPath: url.path + "/manifest.sqlite-wal")[.size] as? Int)
            #expect(walSize > 50 * 4_000, "the writes wait in the WAL")
            TmpfsMount.fill(mount.path + "/ballast")
            try cache.flush()
            for index in 0..<50 { #expect(try cache.value(forKey: "held\(index)") == bytes(4_000, seed: UInt8(index))) }
            try cache.close()
        }
        unlink(mount.path + "/ballast")
        let cache = try DiskCache(directory: url, configuration: .testing())
        for index in 0..<50 { #expect(try cache.value(forKey: "held\(index)") == bytes(4_000, seed: UInt8(index))) }
        try cache.close()
    }

    @Test func openingAStoreOnACompletelyFullDiskWorksOrThrowsDiskFull() throws {
        let mount = try TmpfsMount(size: "1m")
        defer { mount.unmount() }
        let url = URL(fileURLWithPath: mount.path + "/cache")
        do {
            let cache = try DiskCache(directory: url, configuration: .testing())
            for (index, key) in Self.earlier.enumerated() {
                try cache.setValue(CheckedValue.make(key: key, seq: 1, size: index % 2 == 0 ? 500 : 25_000), forKey: key)
            }
            try cache.close()  // the last connection: SQLite deletes -wal and -shm
        }
        // Take every last byte, so SQLite cannot create its shared-memory file.
        TmpfsMount.fill(mount.path + "/ballast")
        do {
            try Self.checkEarlierEntries(url, .testing())
        } catch let error as KVCacheError {
            guard error.code == .diskFull else {
                Issue.record("expected diskFull, got \(error)")
                return
            }
        }
        unlink(mount.path + "/ballast")
        try Self.checkEarlierEntries(url, .testing())
    }
}
