import Foundation
import Testing
@testable import KVCache

/// Fail-safe (issue 16): a load whose computation throws serves the key's value that expired
/// less than `FailSafe.maxStaleness` ago, marked stale, instead of the error.
@Suite struct CacheFailSafeTests {
    struct SourceDown: Error, Equatable {}

    /// Computations that succeed with `Data(count: n)` for the n-th call while `isUp`, and
    /// throw `SourceDown` otherwise.
    final class Source: Sendable {
        let calls = MutexBox(0)
        let up = MutexBox(true)
        var isUp: Bool {
            get { up.withLock { $0 } }
            set { up.withLock { $0 = newValue } }
        }
        var count: Int { calls.withLock { $0 } }
        @Sendable func compute() async throws -> Data {
            let number = calls.withLock { $0 += 1; return $0 }
            guard isUp else { throw SourceDown() }
            return Data(count: number)
        }
    }

    static let lifetime = Expiration.after(.seconds(10))

    func load(_ cache: Cache<Data>, _ source: Source, _ key: String = "k") async throws -> LoadResult<Data> {
        try await cache.result(forKey: key, expiration: Self.lifetime, orCompute: source.compute)
    }

    func makeCache(_ fixture: CacheFixture, _ failSafe: Cache<Data>.FailSafe?) throws -> Cache<Data> {
        try fixture.make { $0.failSafe = failSafe }
    }

    @Test func anExpiredValueIsServedMarkedStaleWhenTheComputationThrows() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try makeCache(fixture, .init(maxStaleness: .seconds(60), retryInterval: .zero))
        defer { try? cache.close() }
        let source = Source()
        let storedAt = fixture.clock.wall
        guard case .computed(let first) = try await load(cache, source) else { Issue.record("not computed"); return }
        #expect(first == Data(count: 1))

        fixture.clock.advance(by: 11)
        source.isUp = false
        // Ordinary reads never return it, and record nothing that would remove it.
        #expect(try await cache.value(forKey: "k") == nil)
        #expect(try await cache.result(forKey: "k").source == .none)
        #expect(try await !cache.contains("k"))
        #expect(try await cache.expiration(forKey: "k") == nil)
        try await cache.flush(durability: .committed)
        #expect(try cache.disk.totalCount == 1)

        let served = try await load(cache, source)
        guard case .stale(let value, let expiredAt, let error) = served else {
            Issue.record("not served stale: \(served)")
            return
        }
        #expect(value == Data(count: 1) && served.isStale && served.value == Data(count: 1))
        #expect(expiredAt == Date(timeIntervalSince1970: storedAt + 10))
        #expect(error is SourceDown)
        // `value(forKey:…orCompute:)` serves it too, unmarked.
        #expect(try await cache.value(forKey: "k", expiration: Self.lifetime, orCompute: source.compute) == Data(count: 1))
        #expect(cache.statistics.failSafeServes == 2)
        #expect(cache.statistics.computations == 3)
        #expect(cache.statistics.description.contains("2 stale (fail-safe)"))
        // Nothing was stored: the value is still expired for ordinary reads.
        #expect(try await cache.value(forKey: "k") == nil)

        // Once the source is back, the next load computes and stores as usual.
        source.isUp = true
        guard case .computed(let fresh) = try await load(cache, source) else { Issue.record("not computed"); return }
        #expect(fresh == Data(count: 4))
        #expect(try await cache.value(forKey: "k") == Data(count: 4))
    }

    @Test func pastTheWindowTheErrorIsThrownAndTheValueGoes() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try makeCache(fixture, .init(maxStaleness: .seconds(60), retryInterval: .zero))
        defer { try? cache.close() }
        let source = Source()
        _ = try await load(cache, source)
        source.isUp = false
        fixture.clock.advance(by: 10 + 59)
        #expect(try await load(cache, source).isStale, "1 s before the window ends")
        fixture.clock.advance(by: 1)
        await #expect(throws: SourceDown.self) { try await load(cache, source) }
        #expect(cache.statistics.failSafeServes == 1)
        // Past the window an ordinary read removes the expired entry, as without fail-safe.
        #expect(try await cache.value(forKey: "k") == nil)
        try await cache.flush(durability: .committed)
        #expect(try cache.disk.totalCount == 0)
    }

    @Test func withoutFailSafeTheErrorIsThrownAndExpiredValuesGoAtOnce() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try makeCache(fixture, nil)
        defer { try? cache.close() }
        let source = Source()
        _ = try await load(cache, source)
        source.isUp = false
        fixture.clock.advance(by: 11)
        await #expect(throws: SourceDown.self) { try await load(cache, source) }
        try await cache.flush(durability: .committed)
        #expect(try cache.disk.totalCount == 0)
        #expect(cache.statistics.failSafeServes == 0)
    }

    @Test func theExpiredSweepKeepsValuesForTheWindowOnlyAndLimitsStillTrimThem() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try makeCache(fixture, .init(maxStaleness: .seconds(60)))
        defer { try? cache.close() }
        try await cache.setValue(bytes(10), forKey: "short", expiration: .after(.seconds(10)))
        try await cache.setValue(bytes(10), forKey: "long", expiration: .after(.seconds(100)))
        try await cache.setValue(bytes(10), forKey: "trimmed", expiration: .after(.seconds(10)))
        fixture.clock.advance(by: 11)
        #expect(try cache.disk.removeExpired() == 0)
        // A limit trims expired entries kept for fail-safe like any other (oldest access first).
        #expect(try await cache.disk.trim(toCount: 2) == 1)
        #expect(try await cache.disk.info(forKey: "long") != nil)
        fixture.clock.advance(by: 60)
        #expect(try cache.disk.removeExpired() == 1)
        #expect(try cache.disk.totalCount == 1)
        let source = Source()
        source.isUp = false
        for key in ["short", "trimmed"] {
            await #expect(throws: SourceDown.self) { try await load(cache, source, key) }
        }
    }

    @Test func withinTheRetryIntervalTheStaleValueIsServedWithoutComputing() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try makeCache(fixture, .init(maxStaleness: .seconds(60), retryInterval: .seconds(5)))
        defer { try? cache.close() }
        let source = Source()
        _ = try await load(cache, source)
        source.isUp = false
        fixture.clock.advance(by: 11)
        #expect(try await load(cache, source).isStale)
        #expect(source.count == 2)
        fixture.clock.advance(by: 4)
        let again = try await load(cache, source)
        guard case .stale(_, _, let error) = again else { Issue.record("not served stale: \(again)"); return }
        #expect(error is SourceDown, "the failure that started the interval")
        #expect(source.count == 2, "not computed within the retry interval")
        #expect(cache.statistics.failSafeServes == 2)
        fixture.clock.advance(by: 1)
        source.isUp = true
        #expect(try await load(cache, source).value == Data(count: 3))
        #expect(source.count == 3)
    }

    /// Memory drops expired values: a value kept in memory only has nothing to serve stale.
    @Test func aValueKeptInMemoryOnlyIsNotServedStale() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try makeCache(fixture, .init(maxStaleness: .seconds(60), retryInterval: .zero))
        defer { try? cache.close() }
        let source = Source()
        _ = try await cache.result(forKey: "k", expiration: Self.lifetime, diskWrite: .skipped, orCompute: source.compute)
        source.isUp = false
        fixture.clock.advance(by: 11)
        await #expect(throws: SourceDown.self) { try await load(cache, source) }
    }

    @Test func aStaleValueInAFileIsServedToo() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try makeCache(fixture, .init(maxStaleness: .seconds(60), retryInterval: .zero))
        defer { try? cache.close() }
        try await cache.setValue(bytes(100_000, seed: 7), forKey: "big", expiration: .after(.seconds(10)))
        #expect(try await cache.disk.info(forKey: "big")?.isInFile == true)
        try await cache.flush(durability: .committed)
        fixture.clock.advance(by: 11)
        let source = Source()
        source.isUp = false
        #expect(try await load(cache, source, "big").value == bytes(100_000, seed: 7))
    }

    @Test(arguments: [
        Cache<Data>.FailSafe(maxStaleness: .zero),
        Cache<Data>.FailSafe(maxStaleness: .seconds(-1)),
        Cache<Data>.FailSafe(maxStaleness: .nanoseconds(-1)),
        Cache<Data>.FailSafe(maxStaleness: .seconds(365 * 86_400 + 1)),
        Cache<Data>.FailSafe(maxStaleness: .seconds(Int64.max)),
        Cache<Data>.FailSafe(maxStaleness: .seconds(60), retryInterval: .seconds(-1)),
        Cache<Data>.FailSafe(maxStaleness: .seconds(60), retryInterval: .seconds(61)),
    ])
    func badSettingsAreRejected(_ failSafe: Cache<Data>.FailSafe) throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        #expect(throws: KVCacheError.self) {
            do {
                _ = try makeCache(fixture, failSafe)
            } catch let error as KVCacheError {
                #expect(error.code == .invalidArgument)
                throw error
            }
        }
    }

    @Test func theLongestWindowAndTheSmallestAreAccepted() async throws {
        for failSafe in [Cache<Data>.FailSafe(maxStaleness: Cache<Data>.FailSafe.longestStaleness,
                                              retryInterval: Cache<Data>.FailSafe.longestStaleness),
                         // Deadlines are wall-clock seconds in a Double: about a microsecond's precision.
                         Cache<Data>.FailSafe(maxStaleness: .milliseconds(1), retryInterval: .zero)] {
            let fixture = CacheFixture()
            defer { fixture.remove() }
            let cache = try makeCache(fixture, failSafe)
            defer { try? cache.close() }
            let source = Source()
            _ = try await load(cache, source)
            source.isUp = false
            fixture.clock.advance(by: 10)
            // At the deadline it has expired, and not yet for a whole millisecond.
            #expect(try await load(cache, source).isStale)
        }
    }
}
