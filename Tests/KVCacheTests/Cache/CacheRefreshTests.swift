import Foundation
import Testing
@testable import KVCache

/// Stale-while-revalidate: `value(forKey:expiration:refreshAfter:diskWrite:orCompute:)` (issue 14).
@Suite struct CacheRefreshTests {
    let lifetime = Expiration.after(.seconds(60))

    /// Reads "k" as every test here does: 60 s lifetime, refreshed after 30 s.
    func read(_ cache: Cache<Data>, _ source: Source) async throws -> Data {
        try await cache.value(forKey: "k", expiration: lifetime, refreshAfter: .seconds(30)) { try await source.next() }
    }

    /// Numbered values: the n-th computation returns n bytes.
    final class Source: Sendable {
        let computations = MutexBox(0)
        let gate: AsyncGate?
        let fails: Bool
        init(gate: AsyncGate? = nil, fails: Bool = false) {
            self.gate = gate
            self.fails = fails
        }
        func next() async throws -> Data {
            let number = computations.withLock { $0 += 1; return $0 }
            if number > 1 { await gate?.wait() }
            if fails && number > 1 { throw KVCacheError.invalidArgument("failing on purpose") }
            return Data(count: number)
        }
    }

    @Test func aValueOlderThanRefreshAfterIsServedAndRecomputedInTheBackground() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        defer { try? cache.close() }
        let source = Source()
        #expect(try await read(cache, source) == Data(count: 1))
        fixture.clock.advance(by: 29)
        #expect(try await read(cache, source) == Data(count: 1))
        await cache.waitForRefreshes()
        #expect(cache.statistics.refreshes == 0, "not due before refreshAfter")
        fixture.clock.advance(by: 2)
        #expect(try await read(cache, source) == Data(count: 1), "the current value is served at once")
        await cache.waitForRefreshes()
        #expect(cache.statistics.refreshes == 1)
        #expect(try await cache.value(forKey: "k") == Data(count: 2))
        #expect(try await cache.expiration(forKey: "k") == .at(Date(timeIntervalSince1970: fixture.clock.wall + 60)))
        // The refreshed value is fresh again.
        #expect(try await read(cache, source) == Data(count: 2))
        await cache.waitForRefreshes()
        #expect(cache.statistics.refreshes == 1)
        #expect(source.computations.withLock { $0 } == 2)
    }

    @Test func aValueReadFromDiskAfterAReopenIsRefreshedToo() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let source = Source()
        do {
            let cache = try fixture.make()
            _ = try await read(cache, source)
            try cache.close()
        }
        fixture.clock.advance(by: 45)
        let cache = try fixture.make()
        defer { try? cache.close() }
        let value = try await read(cache, source)
        #expect(value == Data(count: 1))
        #expect(cache.statistics.diskHits == 1)
        await cache.waitForRefreshes()
        #expect(try await cache.value(forKey: "k") == Data(count: 2))
        #expect(try await cache.disk.value(forKey: "k") == Data(count: 2))
    }

    /// Stores "k" (computation 1) and lets 40 s pass: the value is due for a refresh.
    func dueValue(_ fixture: CacheFixture, _ source: Source) async throws -> Cache<Data> {
        let cache = try fixture.make()
        _ = try await read(cache, source)
        fixture.clock.advance(by: 40)
        return cache
    }

    @Test func oneRefreshPerKeyAtATime() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let gate = AsyncGate()
        let source = Source(gate: gate)
        let cache = try await dueValue(fixture, source)
        defer { try? cache.close() }
        for _ in 0..<5 {
            let value = try await read(cache, source)
            #expect(value == Data(count: 1), "served while the refresh is held")
        }
        gate.open()
        await cache.waitForRefreshes()
        #expect(source.computations.withLock { $0 } == 2)
        #expect(cache.statistics.refreshes == 1)
        #expect(try await cache.value(forKey: "k") == Data(count: 2))
    }

    @Test(arguments: ["replaced", "removed", "touched"])
    func aRefreshDropsItsResultWhenTheEntryChangedMeanwhile(change: String) async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let gate = AsyncGate()
        let source = Source(gate: gate)
        let cache = try await dueValue(fixture, source)
        defer { try? cache.close() }
        _ = try await read(cache, source)
        switch change {
        case "replaced": try await cache.setValue(Data([7]), forKey: "k", expiration: lifetime)
        case "removed": try await cache.removeValue(forKey: "k")
        default: try await cache.touch("k", expiration: .after(.seconds(600)))
        }
        gate.open()
        await cache.waitForRefreshes()
        #expect(cache.statistics.discardedRefreshes == 1)
        let expected: Data? = change == "replaced" ? Data([7]) : change == "removed" ? nil : Data(count: 1)
        #expect(try await cache.value(forKey: "k") == expected, "a \(change) entry is not overwritten (nor brought back)")
        #expect(try await cache.disk.value(forKey: "k") == expected)
    }

    @Test func aFailedRefreshKeepsTheValueUntilItExpires() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let source = Source(fails: true)
        let cache = try await dueValue(fixture, source)
        defer { try? cache.close() }
        let value = try await read(cache, source)
        #expect(value == Data(count: 1))
        await cache.waitForRefreshes()
        #expect(cache.statistics.failedRefreshes == 1)
        #expect(try await cache.value(forKey: "k") == Data(count: 1))
        fixture.clock.advance(by: 21)
        #expect(try await cache.value(forKey: "k") == nil, "expired as stored")
    }

    @Test func refreshAfterNeedsALifetimeLongerThanIt() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        defer { try? cache.close() }
        let invalid: [(Expiration, Duration)] = [
            (.never, .seconds(1)), (.at(.distantFuture), .seconds(1)), (lifetime, .seconds(60)),
            (lifetime, .seconds(61)), (lifetime, .zero), (lifetime, .seconds(-1)), (.after(.zero), .seconds(1)),
        ]
        for (expiration, refreshAfter) in invalid {
            await #expect(throws: KVCacheError.self, "\(expiration), refreshAfter \(refreshAfter)") {
                _ = try await cache.value(forKey: "k", expiration: expiration, refreshAfter: refreshAfter) { Data([1]) }
            }
        }
        #expect(try await cache.contains("k") == false)
        #expect(cache.statistics.computations == 0)
    }

    @Test func theFacadeTellsAnEntrysExpirationFromEitherLevel() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let deadline = Date(timeIntervalSince1970: fixture.clock.wall + 60)
        do {
            let cache = try fixture.make()
            try cache.setValue(Data([1]), forKey: "ttl", expiration: lifetime)
            try cache.setValue(Data([1]), forKey: "forever")
            try cache.setValue(Data([1]), forKey: "queued", expiration: lifetime, diskWrite: .background)
            #expect(try cache.expiration(forKey: "ttl") == .at(deadline))
            #expect(try cache.expiration(forKey: "forever") == .never)
            #expect(try cache.expiration(forKey: "queued") == .at(deadline))
            #expect(try cache.expiration(forKey: "none") == nil)
            #expect(throws: KVCacheError.self) { try cache.expiration(forKey: "") }
            try cache.close()
        }
        let reopened = try fixture.make()  // memory empty: the disk level answers
        defer { try? reopened.close() }
        #expect(try reopened.expiration(forKey: "ttl") == .at(deadline))
        #expect(try reopened.expiration(forKey: "forever") == .never)
        #expect(try reopened.expiration(forKey: "queued") == .at(deadline))
        fixture.clock.advance(by: 60)
        #expect(try reopened.expiration(forKey: "ttl") == nil, "an expired entry has no expiration")
        #expect(reopened.statistics.hits + reopened.statistics.misses == 0, "not counted as reads")
    }
}
