import Dispatch
import KVCacheTestSupport
import Foundation
import Testing
@testable import KVCache

/// Many tasks mutating and reading a small key space through every write path
/// (run under ThreadSanitizer in CI).
struct ConcurrencyCacheTests {
    @Test func levelsAgreeAfterConcurrentMixedWrites() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        // A small memory level, so reads miss and promote while others write.
        let cache = try fixture.make { $0.memory.countLimit = 4 }
        let keys = (0..<12).map { "key\($0)" }

        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<6 {
                group.addTask { try Self.work(on: cache, keys: keys, seed: UInt64(worker)) }
            }
            try await group.waitForAll()
        }
        try await cache.waitForBackgroundWrites()

        for key in keys {
            if let inMemory = cache.memory.value(forKey: key), let onDisk = try await cache.disk.value(forKey: key) {
                #expect(inMemory == onDisk, "\(key)")
            }
        }
        #expect(cache.statistics.sets > 0)
    }

    /// The facade's counters take no lock: reads on several threads at once are each
    /// counted, once.
    @Test func countersCountEveryReadFromManyThreads() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make { $0.memory.countLimit = 1 }
        try cache.setValue(Data([1]), forKey: "stored-a")
        try cache.setValue(Data([2]), forKey: "stored-b")
        let threads = 4, reads = 2_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for read in 0..<reads {
                // A miss, then a hit that alternates keys, so memory (one entry) keeps
                // sending reads to the disk.
                _ = try? cache.value(forKey: "absent-\(thread)-\(read)")
                _ = try? cache.value(forKey: read.isMultiple(of: 2) ? "stored-a" : "stored-b")
            }
        }
        let statistics = cache.statistics
        #expect(statistics.misses == threads * reads)
        #expect(statistics.memoryHits + statistics.diskHits == threads * reads)
    }

    /// Writes made directly through `cache.disk` while other threads read (and promote)
    /// through the cache: once all are done, no memory copy differs from the disk's value
    /// (issue 14: a direct write drops the memory copy, and a promotion that read the old
    /// value is dropped).
    @Test func directDiskWritesRacingReadsLeaveNoStaleMemoryCopy() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make { $0.memory.countLimit = 4 }
        let keys = (0..<8).map { "p\($0 % 2)/key\($0)" }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<6 {
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(worker) &+ 1000)
                    for step in 0..<300 {
                        let key = keys[Int(random.next() % UInt64(keys.count))]
                        let value = Data("\(worker)-\(step)".utf8)
                        guard worker % 2 == 1 else {
                            _ = try cache.value(forKey: key)
                            continue
                        }
                        switch random.next() % 8 {
                        case 0: try cache.disk.removeValue(forKey: key)
                        case 1: try cache.disk.touch(key, expiration: .after(.seconds(3600)))
                        case 2: try cache.setValue(value, forKey: key)
                        case 3: try cache.setValue(value, forKey: key, diskWrite: .background)
                        case 4 where step % 50 == 0: try cache.disk.removeValues(withPrefix: "p\(step % 2)/")
                        default: try cache.disk.setValue(value, forKey: key)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await cache.waitForBackgroundWrites()
        for key in keys {
            if let inMemory = cache.memory.value(forKey: key) {
                #expect(try await cache.disk.value(forKey: key) == inMemory, "\(key): a stale memory copy")
            }
        }
    }

    /// Random synchronous calls: writes of every kind, removals and reads.
    private static func work(on cache: Cache<Data>, keys: [String], seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        for step in 0..<300 {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            let value = Data("\(seed)-\(step)".utf8)
            switch random.next() % 10 {
            case 0: try cache.setValue(value, forKey: key)
            case 1: try cache.setValue(value, forKey: key, diskWrite: .background)
            case 2: try cache.setValue(value, forKey: key, diskWrite: .skipped)
            case 3: try cache.removeValue(forKey: key)
            default: _ = try cache.value(forKey: key)
            }
        }
    }

    @Test func asyncReadsAndWritesFromManyTasks() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()

        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<50 {
                        let key = "w\(worker)-\(index)"
                        try await cache.setValue(bytes(64, seed: UInt8(worker)), forKey: key)
                        #expect(try await cache.value(forKey: key) == bytes(64, seed: UInt8(worker)))
                    }
                }
            }
            try await group.waitForAll()
        }

        #expect(try await cache.disk.keys(limit: 1000).count == 400)
        #expect(cache.statistics.memoryHits == 400)
    }
}
