import Foundation
import Testing
@testable import KVCache

/// `value(forKey:orCompute:)` under many concurrent callers (run under ThreadSanitizer in CI).
struct ConcurrencyCacheLoadingTests {
    private struct Boom: Error, Equatable {}

    /// A cache that reports how many callers wait for a key's load.
    private static func makeCache(_ fixture: CacheFixture) throws -> (Cache<Data>, AsyncStream<Int>) {
        let (joins, continuation) = AsyncStream<Int>.makeStream()
        let cache = try fixture.make(coder: DataCoder(), didJoinLoad: { _, count in continuation.yield(count) })
        return (cache, joins)
    }

    private static func waitUntil(_ joins: AsyncStream<Int>, count: Int) async {
        for await joined in joins where joined >= count { return }
    }

    @Test func concurrentMissesComputeOnceAndAllGetTheValue() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let (cache, joins) = try Self.makeCache(fixture)
        let gate = AsyncGate()
        let runs = Locked(0)

        let values = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    try await cache.value(forKey: "k") {
                        runs.withLock { $0 += 1 }
                        await gate.wait()
                        return bytes(1000)
                    }
                }
            }
            await Self.waitUntil(joins, count: 100)
            gate.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }

        #expect(values.count == 100)
        #expect(values.allSatisfy { $0 == bytes(1000) })
        #expect(runs.value == 1)
        let statistics = cache.statistics
        #expect(statistics.computations == 1)
        // 99 callers were served by the one computation: counted, and in the hit ratio.
        #expect(statistics.joinedLoads == 99 && statistics.misses == 1 && statistics.hits == 0)
        #expect(statistics.hitRatio == 0.99)
        #expect(cache.memory.value(forKey: "k") == bytes(1000))
        #expect(try await cache.disk.value(forKey: "k") == bytes(1000))
    }

    @Test func anErrorReachesEveryWaiterAndNothingIsCached() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let (cache, joins) = try Self.makeCache(fixture)
        let gate = AsyncGate()

        let failures = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    do {
                        _ = try await cache.value(forKey: "k") {
                            await gate.wait()
                            throw Boom()
                        }
                        return false
                    } catch {
                        return error is Boom
                    }
                }
            }
            await Self.waitUntil(joins, count: 100)
            gate.open()
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }

        #expect(failures == 100)
        #expect(cache.memory.count == 0)
        #expect(try cache.disk.totalCount == 0)
        let retried = try await cache.value(forKey: "k") { bytes(5) }
        #expect(retried == bytes(5))
        #expect(cache.statistics.computations == 2)
    }

    @Test func cancellingOneWaiterLeavesTheOthersWaitingForTheSameComputation() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let (cache, joins) = try Self.makeCache(fixture)
        let gate = AsyncGate()
        let runs = Locked(0)
        let load: @Sendable () async throws -> Data = {
            try await cache.value(forKey: "k") {
                runs.withLock { $0 += 1 }
                await gate.wait()
                return bytes(10)
            }
        }

        let first = Task { try await load() }
        let second = Task { try await load() }
        let third = Task { try await load() }
        await Self.waitUntil(joins, count: 3)
        second.cancel()
        let cancelled = await second.result
        gate.open()

        #expect(throws: CancellationError.self) { try cancelled.get() }
        #expect(try await first.value == bytes(10))
        #expect(try await third.value == bytes(10))
        #expect(runs.value == 1)
        #expect(try await cache.disk.value(forKey: "k") == bytes(10))
    }

    @Test func aStoredValueIsReturnedWithoutComputing() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let (cache, _) = try Self.makeCache(fixture)
        try await cache.setValue(bytes(10), forKey: "k")
        cache.memory.removeAll()

        let value = try await cache.value(forKey: "k") { Issue.record("computed"); return bytes(1) }

        #expect(value == bytes(10))
        #expect(cache.statistics.diskHits == 1)
        #expect(cache.memory.contains("k"))
    }
}
