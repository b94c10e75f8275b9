import KVCacheTestSupport
import Foundation
import Testing
@testable import KVCache

/// Faults from the environment: a store whose file system turns read-only (a
/// tmpfs remounted ro: root bypasses permission bits, a read-only mount does not),
/// and a wall clock that jumps backwards. Typed errors or working reads, never a
/// crash, never a wiped store.
@Suite(.blockingOnItsOwnThread, .serialized) struct FaultTests {
    static func fill(_ cache: DiskCache) throws {
        for index in 0..<10 {
            let key = "k\(index)"
            try cache.setValue(CheckedValue.make(key: key, seq: 7, size: index % 2 == 0 ? 200 : 30_000), forKey: key)
        }
        try cache.flush()
    }

    static func intactCount(_ cache: DiskCache) throws -> Int {
        try (0..<10).filter { index in
            try cache.value(forKey: "k\(index)").flatMap { CheckedValue.seq(of: $0, key: "k\(index)") } == 7
        }.count
    }

    @Test(.enabled(if: TmpfsMount.isAvailable))
    func aReadOnlyStoreGivesTypedErrorsAndIsIntactWhenWritableAgain() throws {
        let mount = try TmpfsMount(size: "2m")
        defer { mount.unmount() }
        let url = URL(fileURLWithPath: mount.path + "/cache")
        do {
            let cache = try DiskCache(directory: url, configuration: .testing())
            try Self.fill(cache)
            try cache.close()
        }
        #expect(mount.remount(readOnly: true))
        do {
            // Opening may fail (SQLite cannot create the shared-memory file) — with a typed error...
            let cache = try DiskCache(directory: url, configuration: .testing())
            // ...or succeed: then reads work and writes fail with a typed error.
            #expect(try Self.intactCount(cache) == 10)
            #expect(throws: KVCacheError.self) {
                try cache.setValue(bytes(30_000), forKey: "new")
                try cache.flush()
            }
            try cache.close()
        } catch let error as KVCacheError {
            Reliability.report("read-only store: open refused with \(error)")
        }
        #expect(mount.remount(readOnly: false))
        let cache = try DiskCache(directory: url, configuration: .testing())
        #expect(try Self.intactCount(cache) == 10)
        #expect(cache.statistics.rebuilds == 0)
        try cache.setValue(bytes(30_000), forKey: "new")
        try cache.flush()
        try cache.close()
        #expect(try storeProblems(at: url.path).isEmpty)
    }

    @Test(.enabled(if: TmpfsMount.isAvailable))
    func aStoreThatCannotBeCreatedOnAReadOnlyFileSystemThrowsATypedError() throws {
        let mount = try TmpfsMount(size: "1m")
        defer { mount.unmount() }
        #expect(mount.remount(readOnly: true))
        #expect(throws: KVCacheError.self) {
            _ = try DiskCache(directory: URL(fileURLWithPath: mount.path + "/cache"), configuration: .testing())
        }
    }

    @Test func aClockJumpingBackwardsKeepsValuesAndAbsoluteExpirations() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let start = clock.wall
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.clock = clock.function })
        try Self.fill(cache)
        try cache.setValue(bytes(1), forKey: "ten seconds", expiration: .after(.seconds(10)))
        try cache.flush()
        clock.advance(by: -86_400)  // a day back
        #expect(try Self.intactCount(cache) == 10)
        #expect(try cache.value(forKey: "ten seconds") == bytes(1))
        #expect(try cache.trim(toAge: .seconds(3600)) == 0, "entries from 'the future' are not old")
        #expect(try cache.removeExpired() == 0)
        for index in 0..<5 { try cache.setValue(bytes(10), forKey: "after\(index)") }
        try cache.flush()
        #expect(try cache.totalCount == 16)
        clock.advance(by: 86_400 + 11)  // back to the original time line, past the deadline
        #expect(try cache.value(forKey: "ten seconds") == nil)
        #expect(clock.wall > start + 10)
        try cache.close()
        #expect(try storeProblems(dir).isEmpty)
    }

    @Test(arguments: [false, true])
    func afterTheClockJumpsBackwardsNewEntriesAreNotTrimmedBeforeOldOnes(reopening: Bool) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let configuration = DiskCache.Configuration.testing { $0.clock = clock.function }
        var cache = try DiskCache(directory: dir.url, configuration: configuration)
        for index in 0..<10 {
            clock.advance(by: 1)
            try cache.setValue(bytes(10), forKey: "old\(index)")
        }
        try cache.flush()
        clock.advance(by: -3600)
        if reopening {
            try cache.close()
            cache = try DiskCache(directory: dir.url, configuration: configuration)
        }
        for index in 0..<10 {
            clock.advance(by: 1)
            try cache.setValue(bytes(10), forKey: "new\(index)")
        }
        try cache.trim(toCount: 10)
        let kept = try cache.keys(limit: 100)
        #expect(kept == (0..<10).map { "new\($0)" }, "LRU order must survive the jump: \(kept)")
    }
}
