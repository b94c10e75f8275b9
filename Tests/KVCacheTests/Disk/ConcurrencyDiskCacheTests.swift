import Dispatch
import Foundation
import Testing
@testable import KVCache

/// Short stress runs; CI runs suites named "Concurrency…" under ThreadSanitizer.
@Suite struct ConcurrencyDiskCacheTests {
    /// A value that names its key and version, so a reader can check what it got.
    static func value(key: Int, version: Int, large: Bool) -> Data {
        var data = Data("\(key):\(version):".utf8)
        data.append(bytes(large ? 25_000 : 200, seed: UInt8(truncatingIfNeeded: key &+ version)))
        return data
    }

    static func isValid(_ data: Data, key: Int) -> Bool {
        let parts = data.prefix(32).split(separator: UInt8(ascii: ":"), maxSplits: 2)
        guard parts.count == 3, let k = Int(String(decoding: parts[0], as: UTF8.self)), k == key,
              let version = Int(String(decoding: parts[1], as: UTF8.self)) else { return false }
        return data == value(key: key, version: version, large: data.count > 10_000)
    }

    @Test func threadsSettingReadingAndRemovingSeeOnlyWholeValues() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(0.001) })
        let failures = MutexBox<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for step in 0..<200 {
                let key = (step * 7 + thread) % 40
                do {
                    switch step % 5 {
                    case 0, 1:
                        try cache.setValue(Self.value(key: key, version: step, large: step % 4 == 0), forKey: "k\(key)")
                    case 2, 3:
                        if let data = try cache.value(forKey: "k\(key)"), !Self.isValid(data, key: key) {
                            failures.withLock { $0.append("bad value for k\(key)") }
                        }
                    default:
                        try cache.removeValue(forKey: "k\(key)")
                        _ = cache.statistics
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        try cache.flush()
        let count = try cache.totalCount
        #expect(try cache.keys(limit: 100).count == count)
        #expect(try cache.sweepOrphans(gracePeriod: .seconds(0)) == 0)
    }

    @Test func removeAllWhileOtherThreadsRead() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        for key in 0..<30 { try cache.setValue(Self.value(key: key, version: 0, large: key % 3 == 0), forKey: "k\(key)") }
        let failures = MutexBox<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 3) { thread in
            for round in 0..<100 {
                do {
                    if thread == 0 {
                        if round % 20 == 0 { try cache.removeAll() }
                        let key = round % 30
                        try cache.setValue(Self.value(key: key, version: round, large: key % 3 == 0), forKey: "k\(key)")
                    } else {
                        let key = (round + thread) % 30
                        if let data = try cache.value(forKey: "k\(key)"), !Self.isValid(data, key: key) {
                            failures.withLock { $0.append("bad value for k\(key)") }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        cache.waitForBackgroundWork()
        try cache.flush()
        #expect(try cache.sweepOrphans(gracePeriod: .seconds(0)) == 0)
    }

    /// File values are read outside the lock: a read racing the commit that deletes
    /// the file it looked up must look the key up again, never report a miss.
    @Test func readsOfFileValuesRacingReplacementsNeverMiss() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing { $0.groupCommitDelay = .seconds(0) })
        for key in 0..<2 { try cache.setValue(Self.value(key: key, version: 0, large: true), forKey: "k\(key)") }
        let failures = MutexBox<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for step in 0..<150 {
                let key = step % 2
                do {
                    if thread < 2 {
                        try cache.setValue(Self.value(key: key, version: step, large: true), forKey: "k\(key)")
                    } else if let data = try cache.value(forKey: "k\(key)") {
                        if !Self.isValid(data, key: key) { failures.withLock { $0.append("bad value for k\(key)") } }
                    } else {
                        failures.withLock { $0.append("miss for k\(key), which always has a value") }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(cache.statistics.brokenEntries == 0)
        #expect(cache.statistics.misses == 0)
    }

    @Test func backgroundTrimsRaceWithWritersAndKeepTheLimit() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.countLimit = 50
            $0.groupCommitDelay = .seconds(0.0005)
        })
        DispatchQueue.concurrentPerform(iterations: 3) { thread in
            for step in 0..<200 {
                try? cache.setValue(bytes(step % 10 == 0 ? 21_000 : 50), forKey: "t\(thread)-\(step)")
                _ = try? cache.value(forKey: "t\(thread)-\(step / 2)")
            }
        }
        cache.waitForBackgroundWork()
        // One more write triggers a trim if the last ones landed after the previous trim.
        try cache.setValue(bytes(1), forKey: "last")
        cache.waitForBackgroundWork()
        #expect(try cache.totalCount <= 50)
        try cache.flush()
        let stats = try rawRows(dir.manifestPath, "SELECT count(*), (SELECT count FROM stats) FROM manifest")
        #expect(stats[0][0] == stats[0][1])
    }

    @Test func asyncCallsFromManyTasks() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for step in 0..<40 {
                        let key = "a\(task)-\(step % 10)"
                        try await cache.setValue(Self.value(key: step, version: task, large: false), forKey: key)
                        let data = try await cache.value(forKey: key)
                        #expect(data.map { Self.isValid($0, key: step) } ?? false)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try cache.totalCount == 80)
    }

    @Test func closingWhileOthersWorkMakesLaterCallsThrowClosed() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        let unexpected = MutexBox<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 3) { thread in
            for step in 0..<100 {
                if thread == 0, step == 50 { try? cache.close() }
                do {
                    try cache.setValue(bytes(10), forKey: "k\(step)")
                } catch KVCacheError.closed {
                } catch {
                    unexpected.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(unexpected.withLock { $0 }.isEmpty)
        #expect(throws: KVCacheError.closed) { try cache.value(forKey: "k1") }
    }
}
