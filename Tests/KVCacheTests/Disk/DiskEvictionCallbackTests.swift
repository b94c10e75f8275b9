import Foundation
import Testing
@testable import KVCache

/// `DiskCache.Configuration.onEviction`: each removed entry's key and reason, once its
/// commit has landed.
@Suite struct DiskEvictionCallbackTests {
    final class Recorder: Sendable {
        let events = MutexBox<[String]>([])
        func take() -> [String] {
            events.withLock { events in
                let taken = events.sorted()
                events = []
                return taken
            }
        }
    }

    /// Calls `body` with a cache in a new directory, on a manual clock, whose evictions a
    /// recorder collects.
    static func withCache(_ body: (DiskCache, ManualClock, Recorder) throws -> Void) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let recorder = Recorder()
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.clock = clock.function
            $0.onEviction = { key, reason in recorder.events.withLock { $0.append("\(key) \(reason)") } }
        })
        defer { try? cache.close() }
        try body(cache, clock, recorder)
    }

    @Test func everyKindOfRemovalIsReported() throws { try Self.withCache { cache, clock, recorder in
        for key in ["a", "b", "c", "p/1", "p/2"] { try cache.setValue(bytes(10), forKey: key) }
        try cache.setValue(bytes(30_000), forKey: "file", expiration: .after(.seconds(5)))
        try cache.flush()
        cache.waitForBackgroundWork()
        #expect(recorder.take() == [])
        try cache.setValue(bytes(20), forKey: "a")
        try cache.removeValue(forKey: "b")
        try cache.flush()
        cache.waitForBackgroundWork()
        #expect(recorder.take() == ["a replaced", "b removed"])
        clock.advance(by: 10)
        #expect(try cache.removeExpired() == 1)
        #expect(try cache.removeValues(withPrefix: "p/") == 2)
        cache.waitForBackgroundWork()
        #expect(recorder.take() == ["file expired", "p/1 removed", "p/2 removed"])
        #expect(try cache.trim(toCount: 1) == 1)  // the oldest access goes
        cache.waitForBackgroundWork()
        let trimmed = recorder.take()
        #expect(trimmed == ["a count"] || trimmed == ["c count"])
        // d's set never reached the manifest before removeAll: only the stored entry is reported.
        try cache.setValue(bytes(10), forKey: "d")
        try cache.removeAll()
        cache.waitForBackgroundWork()
        #expect(recorder.take() == [trimmed == ["a count"] ? "c removed" : "a removed"])
        try cache.setValues(["e": bytes(10), "f": bytes(10)])
        try cache.setValues(["e": bytes(11)])
        cache.waitForBackgroundWork()
        #expect(recorder.take() == ["e replaced"])
    } }

    /// The statistics count each replacement `onEviction` reports, whichever write made
    /// it: a set, a batch (`setValues`) or an add over an expired row.
    @Test func statisticsCountEveryReplacementOnEvictionReports() throws { try Self.withCache { cache, clock, recorder in
        try cache.setValue(bytes(10), forKey: "a")
        try cache.setValues(["b": bytes(10)])
        try cache.setValue(bytes(10), forKey: "c", expiration: .after(.seconds(5)))
        try cache.flush()
        try cache.setValue(bytes(11), forKey: "a")
        try cache.setValues(["b": bytes(11)])
        clock.advance(by: 10)
        #expect(try cache.setValueIfAbsent(bytes(11), forKey: "c"))
        try cache.flush()
        cache.waitForBackgroundWork()
        #expect(recorder.take() == ["a replaced", "b replaced", "c replaced"])
        #expect(cache.statistics.evictions[.replaced] == 3)
    } }
}
