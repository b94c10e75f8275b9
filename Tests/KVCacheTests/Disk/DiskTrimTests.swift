import Foundation
import Testing
@testable import KVCache

@Suite struct DiskTrimTests {
    /// A cache holding k0...k(n-1), written one clock second apart.
    func filledCache(_ dir: TemporaryDirectory, _ clock: ManualClock, count: Int = 20, size: Int = 100,
                     configure: (inout DiskCache.Configuration) -> Void = { _ in }) throws -> DiskCache {
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.clock = clock.function
            configure(&$0)
        })
        for index in 0..<count {
            try cache.setValue(bytes(size, seed: UInt8(index)), forKey: "k\(index)")
            clock.advance(by: 1)
        }
        return cache
    }

    @Test func trimToCountRemovesLeastRecentlyAccessedFirst() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try filledCache(dir, clock)
        // Reading k0 and k1 makes them the most recent (the buffered times must count).
        _ = try cache.value(forKey: "k0")
        _ = try cache.value(forKey: "k1")
        #expect(try cache.trim(toCount: 5) == 15)
        #expect(try cache.totalCount == 5)
        let left = Set(try cache.keys(limit: 100))
        #expect(left == ["k0", "k1", "k17", "k18", "k19"])
        #expect(cache.statistics.evictions[.count] == 15)
    }

    @Test func trimToSizeRemovesOldestUntilUnderTheSize() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try filledCache(dir, clock, count: 10, size: 30_000)  // files
        #expect(try cache.trim(toSize: 100_000) == 7)
        #expect(try cache.totalSize == 90_000)
        try cache.flush()
        #expect(dir.dataFiles().count == 3)
        #expect(Set(try cache.keys(limit: 10)) == ["k7", "k8", "k9"])
        #expect(try cache.trim(toSize: 0) == 3)
        #expect(dir.dataFiles().isEmpty)
    }

    @Test func trimToAgeRemovesEntriesNotAccessedRecently() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try filledCache(dir, clock, count: 10)
        _ = try cache.value(forKey: "k0")
        // Now = start + 10; entries k0 (just read), k5...k9 are younger than 5.5 s.
        #expect(try cache.trim(toAge: .seconds(5.5)) == 4)
        #expect(Set(try cache.keys(limit: 10)) == ["k0", "k5", "k6", "k7", "k8", "k9"])
    }

    @Test func trimToFreeSpaceEmptiesTheCacheWhenTheDiskCannotReachIt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try filledCache(dir, clock, count: 10)
        #expect(try cache.trim(toFreeSpace: 0) == 0)
        #expect(try cache.trim(toFreeSpace: .max) == 10)
        #expect(try cache.totalCount == 0)
        #expect(cache.statistics.evictions[.pressure] == 10)
    }

    @Test func exceedingTheCountLimitTrimsToTheLowWatermarkInTheBackground() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try filledCache(dir, clock, count: 100) {
            $0.countLimit = 100
            $0.lowWatermark = 0.5
        }
        cache.waitForBackgroundWork()
        #expect(try cache.totalCount == 100)
        try cache.setValue(bytes(1), forKey: "one-more")
        cache.waitForBackgroundWork()
        #expect(try cache.totalCount == 50)
        #expect(try cache.contains("one-more"))
        #expect(try cache.contains("k0") == false)
    }

    @Test func exceedingTheSizeLimitTrimsToTheLowWatermark() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try filledCache(dir, clock, count: 5, size: 1000) {
            $0.sizeLimit = 5000
            $0.lowWatermark = 0.8
        }
        // At the limit is within it. (Filling past it in one go would make the result
        // depend on when the commits land: a trim of 9 entries to the watermark plus
        // one more write ends at the limit, not below it.)
        cache.waitForBackgroundWork()
        #expect(try cache.totalSize == 5000)
        try cache.setValue(bytes(1000), forKey: "one-more")
        cache.waitForBackgroundWork()
        #expect(try cache.totalSize <= 4000)
        #expect(try cache.contains("one-more"))
        #expect(try cache.contains("k0") == false)
    }

    @Test func aTrimFinishingAfterACommitThatExceededTheLimitTrimsAgain() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.sizeLimit = 5000
            $0.lowWatermark = 0.8
        })
        // A trim is running and has found the store within its limits.
        let setsAtStart = cache.markLimitTrimRunning()
        for index in 0..<10 { try cache.setValue(bytes(1000, seed: UInt8(index)), forKey: "k\(index)") }
        // This commit exceeds the limit, and leaves the check to the running trim.
        try cache.flush()
        cache.finishLimitTrim(madeProgress: false, setsAtStart: setsAtStart)
        // No further call: only the trim itself can notice the new excess.
        cache.backgroundWork.wait()
        #expect(try cache.totalSize <= 4000)
        #expect(try cache.contains("k9"))
    }

    @Test func autoTrimRemovesExpiredAndOldEntriesOnItsInterval() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let cache = try filledCache(dir, clock, count: 3) {
            $0.ageLimit = .seconds(100)
        }
        try cache.setValue(bytes(1), forKey: "expiring", expiration: .after(.seconds(1)))
        clock.advance(by: 2)
        cache.trimToLimits(periodic: true)
        #expect(try cache.contains("expiring") == false)
        #expect(try cache.totalCount == 3)
        clock.advance(by: 200)
        cache.trimToLimits(periodic: true)
        #expect(try cache.totalCount == 0)
    }
}
