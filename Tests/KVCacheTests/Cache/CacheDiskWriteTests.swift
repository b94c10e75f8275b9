import Foundation
import Testing
@testable import KVCache

struct CacheDiskWriteTests {
    @Test func memoryOnlyWritesLeaveNothingOnDisk() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()

        try cache.setValue(bytes(10), forKey: "a", extendedData: Data("x".utf8), diskWrite: .skipped)

        #expect(try cache.result(forKey: "a").source == .memory)
        #expect(try !cache.disk.contains("a"))
        #expect(try cache.extendedData(forKey: "a") == nil)
    }

    @Test func aMemoryOnlyWriteRemovesTheOlderValueOnDisk() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        try cache.setValue(bytes(10, seed: 1), forKey: "a")

        try cache.setValue(bytes(10, seed: 2), forKey: "a", diskWrite: .skipped)
        cache.memory.removeAll()

        #expect(try cache.value(forKey: "a") == nil)
    }

    @Test func backgroundWritesLandOnDiskOnceAwaited() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()

        for index in 0..<50 {
            try cache.setValue(bytes(100 + index), forKey: "key\(index)", extendedData: Data([UInt8(index)]),
                               diskWrite: .background)
        }
        try cache.waitForBackgroundWrites()

        for index in 0..<50 {
            #expect(try cache.disk.value(forKey: "key\(index)") == bytes(100 + index))
            #expect(try cache.disk.extendedData(forKey: "key\(index)") == Data([UInt8(index)]))
        }
        #expect(cache.writes.pendingWrite(forKey: "key49") == nil)
    }

    @Test func aBackgroundWriteIsReadableBeforeItLandsEvenIfMemoryDropsIt() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        try cache.setValue(bytes(10, seed: 1), forKey: "a")

        // The queue is busy with a slow write while the next one waits behind it.
        try cache.setValue(bytes(3_000_000), forKey: "slow", diskWrite: .background)
        try cache.setValue(bytes(10, seed: 2), forKey: "a", extendedData: Data("new".utf8), diskWrite: .background)
        cache.memory.removeAll()

        // Either still pending or landed: never the older value.
        #expect(try cache.value(forKey: "a") == bytes(10, seed: 2))
        #expect(try cache.extendedData(forKey: "a") == Data("new".utf8))
        try cache.waitForBackgroundWrites()
        #expect(try cache.disk.value(forKey: "a") == bytes(10, seed: 2))
    }

    @Test func aLaterImmediateWriteWinsOverAQueuedBackgroundWrite() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()

        try cache.setValue(bytes(3_000_000), forKey: "slow", diskWrite: .background)
        try cache.setValue(bytes(10, seed: 1), forKey: "a", diskWrite: .background)
        try cache.setValue(bytes(10, seed: 2), forKey: "a")
        try cache.waitForBackgroundWrites()

        #expect(try cache.disk.value(forKey: "a") == bytes(10, seed: 2))
        #expect(try cache.value(forKey: "a") == bytes(10, seed: 2))
    }

    @Test func removingAKeyDropsItsQueuedBackgroundWrite() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()

        try cache.setValue(bytes(3_000_000), forKey: "slow", diskWrite: .background)
        try cache.setValue(bytes(10), forKey: "a", diskWrite: .background)
        try cache.setValue(bytes(10), forKey: "b", diskWrite: .background)
        try cache.removeValue(forKey: "a")
        try cache.removeAll()
        try cache.waitForBackgroundWrites()

        #expect(try !cache.disk.contains("a"))
        #expect(try !cache.disk.contains("b"))
        #expect(try cache.value(forKey: "a") == nil)
    }

    @Test func aFailedBackgroundWriteIsReportedOnceAndTheValueStaysInMemory() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        try cache.disk.close()

        try cache.setValue(bytes(10), forKey: "a", diskWrite: .background)

        #expect(throws: KVCacheError.closed) { try cache.waitForBackgroundWrites() }
        try cache.waitForBackgroundWrites()
        #expect(cache.memory.value(forKey: "a") == bytes(10))
        #expect(cache.statistics.failedBackgroundWrites == 1)
    }

    @Test func aFailedImmediateWriteChangesNeitherLevel() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        try cache.setValue(bytes(10, seed: 1), forKey: "a")
        try cache.disk.close()

        #expect(throws: KVCacheError.closed) { try cache.setValue(bytes(10, seed: 2), forKey: "a") }

        #expect(cache.memory.value(forKey: "a") == bytes(10, seed: 1))
    }

    @Test func flushLandsBackgroundWritesAndCommits() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()

        try cache.setValue(bytes(10), forKey: "a", diskWrite: .background)
        try cache.flush()

        let rows = try rawRows(cache.disk.directory.path + "/manifest.sqlite", "SELECT key FROM manifest")
        #expect(rows == [["a"]])
    }
}

struct CacheCloseTests {
    @Test func closeLandsBackgroundWritesBeforeClosingTheDisk() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let directory = fixture.base.url.appendingPathComponent("test")
        do {
            let cache = try fixture.make()
            try cache.setValue(bytes(10), forKey: "a", diskWrite: .background)
            try cache.close()
            #expect(throws: KVCacheError.closed) { try cache.setValue(bytes(10), forKey: "b") }
        }

        let reopened = try Cache<Data>(directory: directory)

        #expect(try reopened.result(forKey: "a").source == .disk)
    }
}
