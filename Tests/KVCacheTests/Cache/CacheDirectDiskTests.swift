import Foundation
import Testing
@testable import KVCache

/// `Cache.disk` is safe to write through (issue 14): a change made directly on the disk
/// level drops the memory level's copy, so the cache never serves a value the disk
/// replaced or removed; the cache's own writes keep their memory copies.
@Suite struct CacheDirectDiskTests {
    @Test func aDirectSetRemoveOrTouchDropsTheMemoryCopy() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        defer { try? cache.close() }
        for key in ["set", "removed", "touched", "absent", "batch"] { try cache.setValue(Data([1]), forKey: key) }
        try cache.disk.setValue(Data([2]), forKey: "set")
        try cache.disk.removeValue(forKey: "removed")
        try cache.disk.touch("touched", expiration: .after(.seconds(5)))
        try cache.removeValue(forKey: "absent")
        try cache.setValue(Data([1]), forKey: "absent", diskWrite: .skipped)  // memory only
        #expect(try cache.disk.setValueIfAbsent(Data([3]), forKey: "absent"))
        try cache.disk.setValues(["batch": Data([4])])
        #expect(try cache.value(forKey: "set") == Data([2]), "the old memory copy was served")
        #expect(try cache.value(forKey: "removed") == nil)
        #expect(try cache.expiration(forKey: "touched") == .at(Date(timeIntervalSince1970: fixture.clock.wall + 5)))
        #expect(try cache.value(forKey: "absent") == Data([3]))
        #expect(try cache.value(forKey: "batch") == Data([4]))
    }

    @Test func aDirectRemovalByPrefixOrOfEverythingDropsThoseCopies() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        defer { try? cache.close() }
        for key in ["a/1", "a/2", "b/1"] { try cache.setValue(Data([1]), forKey: key) }
        #expect(try cache.disk.removeValues(withPrefix: "a/") == 2)
        #expect(try cache.value(forKey: "a/1") == nil)
        #expect(cache.memory.contains("b/1"))
        try cache.disk.removeAll()
        #expect(try cache.value(forKey: "b/1") == nil)
        #expect(cache.memory.count == 0)
        try cache.setValue(Data([1]), forKey: "c")
        try cache.disk.removeAll { _, _ in }
        #expect(try cache.value(forKey: "c") == nil)
    }

    @Test func theCachesOwnWritesKeepTheirMemoryCopies() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        defer { try? cache.close() }
        try cache.setValue(Data([1]), forKey: "immediate")
        try cache.setValue(Data([1]), forKey: "background", diskWrite: .background)
        try cache.setValues(["batch": Data([1])])
        #expect(try cache.setValueIfAbsent(Data([1]), forKey: "absent"))
        try cache.waitForBackgroundWrites()  // the background write landed on the disk level
        try cache.touch("immediate", expiration: .after(.seconds(60)))
        for key in ["immediate", "background", "batch", "absent"] {
            #expect(cache.memory.contains(key), "\(key) was dropped from memory by the cache's own disk write")
        }
        #expect(try cache.disk.value(forKey: "background") == Data([1]))
        #expect(cache.statistics.memoryHits == 0)
    }

    /// Reporting a change through `cache.disk` takes the same path every time (issue 38): the
    /// disk level's listener was re-wrapped in two more thunks by each report, so the n-th
    /// write walked a chain of about 2n closures (writes through `cache.disk` were quadratic)
    /// and releasing the cache after a million of them overflowed the stack. Measured without
    /// a clock: the number of frames under the cache's mutation stays the same. (Frames, not
    /// the address of a local: AddressSanitizer may place locals on a heap-backed fake stack.)
    @Test func reportingDirectChangesDoesNotDeepenTheListener() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        defer { try? cache.close() }
        let depths = MutexBox<[Int]>([])
        cache.writes.duringMutation = { _ in
            let frames = Thread.callStackReturnAddresses.count
            depths.withLock { $0.append(frames) }
        }
        for index in 0..<2_000 { try cache.disk.setValue(Data([1]), forKey: "k\(index % 10)") }
        try cache.disk.removeValue(forKey: "k0")
        cache.writes.duringMutation = nil
        let seen = depths.withLock { $0 }
        #expect(seen.count == 2_001)
        // The old chain grew by two frames a report: thousands by the last one.
        let spread = (seen.max() ?? 0) - (seen.min() ?? 0)
        #expect(seen.min() ?? 0 > 0, "no frames seen")
        #expect(spread < 8, "the listener's stack depth varied by \(spread) frames over 2,001 reports")
    }
}
