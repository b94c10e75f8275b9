import Foundation
import Testing
@testable import KVCache

@Suite struct DiskCacheVerifyTests {
    /// File values k0...k5 and inline values i0...i2. The background sweep never
    /// deletes (infinite grace), so planted orphans stay until `verify` sees them.
    func filledCache(_ dir: TemporaryDirectory) throws -> DiskCache {
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.orphanGracePeriod = .seconds(Int64.max)
            $0.inlineThreshold = 1000
        })
        for index in 0..<6 { try cache.setValue(bytes(5000 + index, seed: UInt8(index)), forKey: "k\(index)") }
        for index in 0..<3 { try cache.setValue(bytes(10, seed: UInt8(index)), forKey: "i\(index)") }
        try cache.flush()
        cache.waitForBackgroundWork()
        return cache
    }

    func fileName(of key: String, in dir: TemporaryDirectory) throws -> String {
        try #require(try rawRows(dir.manifestPath, "SELECT filename FROM manifest WHERE key = '\(key)'").first?[0])
    }

    func rootPage(of name: String, in dir: TemporaryDirectory) throws -> UInt64 {
        let page = try #require(try rawRows(dir.manifestPath, "SELECT rootpage FROM sqlite_master WHERE name = '\(name)'")
            .first?[0])
        return try #require(UInt64(page))
    }

    func pageSize(of path: String) throws -> UInt64 {
        let text = try #require(try rawRows(path, "PRAGMA page_size").first?[0])
        return try #require(UInt64(text))
    }

    func copyPage(_ source: UInt64, over target: UInt64, in path: String) throws {
        let pageSize = try pageSize(of: path)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: (source - 1) * pageSize)
        let page = try #require(try handle.read(upToCount: Int(pageSize)))
        try handle.seek(toOffset: (target - 1) * pageSize)
        try handle.write(contentsOf: page)
    }

    @Test func aCacheWithoutDamageVerifiesHealthy() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try filledCache(dir)
        let report = try cache.verify(orphanGracePeriod: .seconds(0))
        #expect(report.isHealthy)
        #expect(report.problemCount == 0)
        #expect(report.checkedFiles == 6)
        #expect(report.integrityErrors.isEmpty)
        #expect(report.repairs == nil)
    }

    @Test func verifyReportsAMissingFileATruncatedFileAndAnOrphanWithoutChangingAnything() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try filledCache(dir)
        let missing = try fileName(of: "k1", in: dir)
        let truncated = try fileName(of: "k2", in: dir)
        #expect(unlink(dir.dataPath + "/" + missing) == 0)
        #expect(truncate(dir.dataPath + "/" + truncated, 100) == 0)
        try Data("stray".utf8).write(to: URL(fileURLWithPath: dir.dataPath + "/" + strayName))

        let report = try cache.verify(orphanGracePeriod: .seconds(0))
        #expect(!report.isHealthy)
        #expect(report.problemCount == 3)
        #expect(report.missingFiles == [.init(key: "k1", fileName: missing, expectedSize: 5001, actualSize: nil)])
        #expect(report.wrongSizeFiles == [.init(key: "k2", fileName: truncated, expectedSize: 5002, actualSize: 100)])
        #expect(report.orphanFiles == [strayName])
        #expect(report.summaryIsAccurate)
        #expect(try rawRows(dir.manifestPath, "SELECT count(*) FROM manifest") == [["9"]])
        #expect(FileManager.default.fileExists(atPath: dir.dataPath + "/" + strayName))
    }

    @Test func repairRemovesDamagedEntriesAndOrphansAndLeavesAHealthyCache() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try filledCache(dir)
        let truncated = try fileName(of: "k2", in: dir)
        #expect(unlink(dir.dataPath + "/" + (try fileName(of: "k1", in: dir))) == 0)
        #expect(truncate(dir.dataPath + "/" + truncated, 100) == 0)
        try Data("stray".utf8).write(to: URL(fileURLWithPath: dir.dataPath + "/" + strayName))

        var phases: Set<DiskCache.VerificationProgress.Phase> = []
        let repaired = try cache.verify(repair: true, orphanGracePeriod: .seconds(0)) { phases.insert($0.phase) }
        #expect(!repaired.isHealthy)
        #expect(repaired.repairs?.removedEntries == 2)
        #expect(repaired.repairs?.removedOrphanFiles == 1)
        #expect(repaired.repairs?.rebuiltManifest == false)
        #expect(phases == Set(DiskCache.VerificationProgress.Phase.allCases))

        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
        #expect(try cache.totalCount == 7)
        #expect(try cache.value(forKey: "k1") == nil)
        #expect(try cache.value(forKey: "k2") == nil)
        #expect(try cache.value(forKey: "k3") == bytes(5003, seed: 3))
        #expect(try cache.value(forKey: "i0") == bytes(10, seed: 0))
        #expect(!FileManager.default.fileExists(atPath: dir.dataPath + "/" + truncated))
        #expect(!FileManager.default.fileExists(atPath: dir.dataPath + "/" + strayName))
    }

    @Test func unreferencedFilesYoungerThanTheGracePeriodAreNeitherOrphansNorRemoved() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try filledCache(dir)
        try Data("in flight".utf8).write(to: URL(fileURLWithPath: dir.dataPath + "/" + youngName))
        let report = try cache.verify(repair: true, orphanGracePeriod: .seconds(3600))
        #expect(report.isHealthy)
        #expect(report.recentUnreferencedFiles == [youngName])
        #expect(report.repairs?.removedOrphanFiles == 0)
        #expect(FileManager.default.fileExists(atPath: dir.dataPath + "/" + youngName))
    }

    @Test func anInfiniteGracePeriodMakesTheSweepDeleteNothing() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try filledCache(dir)
        try Data("stray".utf8).write(to: URL(fileURLWithPath: dir.dataPath + "/" + strayName))
        #expect(try cache.sweepOrphans() == 0)
        #expect(FileManager.default.fileExists(atPath: dir.dataPath + "/" + strayName))
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).orphanFiles == [strayName])
    }

    @Test func anInaccurateSummaryIsReportedAndRecounted() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try filledCache(dir)
        let other = try Database(path: dir.manifestPath, busyTimeout: 5)
        try other.execute("UPDATE stats SET count = 999, file_size = 1")
        other.close()
        let report = try cache.verify(repair: true, orphanGracePeriod: .seconds(0))
        #expect(!report.summaryIsAccurate)
        #expect(report.repairs?.recountedSummary == true)
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
        let inspection = try cache.inspect()
        #expect(inspection.statistics.count == 9)
        #expect(inspection.statistics.fileSize == (0..<6).reduce(0) { $0 + 5000 + Int64($1) })
    }

    @Test func aDamagedIndexIsReportedAndRepairedByReindexingWithoutLosingEntries() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try filledCache(dir).close()
        // Valid b-tree pages with the wrong entries: the filename index now holds the access-time index's.
        try copyPage(try rootPage(of: "manifest_last_access_time", in: dir),
                     over: try rootPage(of: "manifest_filename", in: dir), in: dir.manifestPath)
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.orphanGracePeriod = .seconds(Int64.max) })
        let report = try cache.verify(orphanGracePeriod: .seconds(0))
        #expect(!report.integrityErrors.isEmpty)
        #expect(!report.isHealthy)

        let repaired = try cache.verify(repair: true, orphanGracePeriod: .seconds(0))
        #expect(repaired.repairs?.reindexed == true)
        #expect(repaired.repairs?.rebuiltManifest == false)
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
        #expect(try cache.totalCount == 9)
        #expect(try cache.value(forKey: "k4") == bytes(5004, seed: 4))
    }

    @Test func aManifestBeyondReindexingIsMovedAsideAndTheOrphanedFilesRemoved() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try filledCache(dir).close()
        let table = try rootPage(of: "manifest", in: dir)
        let pageSize = try pageSize(of: dir.manifestPath)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: dir.manifestPath))
        try handle.seek(toOffset: (table - 1) * pageSize)
        try handle.write(contentsOf: Data(repeating: 0xa5, count: Int(pageSize)))
        try handle.close()
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.orphanGracePeriod = .seconds(Int64.max) })
        #expect(!(try cache.verify(orphanGracePeriod: .seconds(0)).integrityErrors.isEmpty))

        let repaired = try cache.verify(repair: true, orphanGracePeriod: .seconds(0))
        #expect(repaired.repairs?.rebuiltManifest == true)
        #expect(repaired.repairs?.removedOrphanFiles == 6)
        #expect(dir.dataFiles().isEmpty)
        #expect(try cache.verify(orphanGracePeriod: .seconds(0)).isHealthy)
        try cache.setValue(bytes(5000), forKey: "after")
        #expect(try cache.value(forKey: "after") == bytes(5000))
    }

    @Test func inspectionSplitsInlineAndFileValuesAndReportsTheAccessRange() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let start = clock.wall
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.inlineThreshold = 1000
            $0.clock = clock.function
        })
        try cache.setValue(bytes(10), forKey: "old")
        clock.advance(by: 100)
        try cache.setValue(bytes(2000), forKey: "new", expiration: .after(.seconds(10)))
        clock.advance(by: 20)
        let inspection = try cache.inspect()
        #expect(inspection.statistics.count == 2)
        #expect(inspection.statistics.size == 2010)
        #expect(inspection.statistics.inlineCount == 1)
        #expect(inspection.statistics.inlineSize == 10)
        #expect(inspection.statistics.fileCount == 1)
        #expect(inspection.statistics.fileSize == 2000)
        #expect(inspection.statistics.sets == 2)  // this process's counters come with the totals
        #expect(inspection.expiredCount == 1)
        #expect(inspection.oldestAccess == Date(timeIntervalSince1970: start))
        #expect(inspection.newestAccess == Date(timeIntervalSince1970: start + 100))
        #expect(inspection.manifestSize > 0)
        #expect(inspection.pageSize == 16384)
        #expect(inspection.schemaVersion == 1)
        #expect(inspection.directory.hasSuffix(dir.url.lastPathComponent))
    }
}

/// Names the store could have made (only such files in data/ are its own; see FileNameHash.isFileName).
let strayName = FileNameHash.fileName(forKey: "orphan", suffix: 1)
let youngName = FileNameHash.fileName(forKey: "young", suffix: 2)
