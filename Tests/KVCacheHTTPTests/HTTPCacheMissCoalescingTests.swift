#if HTTP
import Foundation
import HTTPTypes
import KVCache
@testable import KVCacheHTTP
import Synchronization
import Testing

/// Concurrent misses of one URL: the first asks the origin, the others wait for its answer.
///
/// The limit catches a hang. It is generous because its clock can start long before a test
/// gets a thread of the pool, in a run where other suites keep the pool busy.
@Suite(.timeLimit(.minutes(5))) struct HTTPCacheMissCoalescingTests {
    /// An origin whose first request waits until the test opens the gate, and which says when
    /// each request arrives.
    final class GatedOrigin: Sendable {
        let arrivals: AsyncStream<Int>
        private let arrived: AsyncStream<Int>.Continuation
        private let state = Mutex<(count: Int, gate: CheckedContinuation<Void, Never>?, isOpen: Bool)>((0, nil, false))
        let fails: Bool

        init(fails: Bool = false) {
            (arrivals, arrived) = AsyncStream.makeStream()
            self.fails = fails
        }

        var count: Int { state.withLock { $0.count } }

        func open() {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.isOpen = true
                defer { state.gate = nil }
                return state.gate
            }?.resume()
        }

        var transport: HTTPCache.Transport {
            { [self] request, _ in
                let number = state.withLock { state -> Int in
                    state.count += 1
                    return state.count
                }
                arrived.yield(number)
                if number == 1 {
                    await withCheckedContinuation { continuation in
                        let isOpen = state.withLock { state -> Bool in
                            if !state.isOpen { state.gate = continuation }
                            return state.isOpen
                        }
                        if isOpen { continuation.resume() }
                    }
                    if fails { throw KVCacheError.invalidArgument("the origin failed") }
                }
                return (HTTPResponse(status: .ok, headerFields: [.cacheControl: "max-age=100"]),
                        Data("answer \(number) to \(request.path ?? "")".utf8))
            }
        }
    }

    /// A cache over the fixture's storage whose miss locks report each waiter.
    static func cache(_ fixture: HTTPCacheFixture, maximumMissWait: Duration = .seconds(60))
        throws -> (HTTPCache, AsyncStream<Int>) {
        let (waits, waited) = AsyncStream<Int>.makeStream()
        let cache = try HTTPCache(storage: fixture.storage, configuration: .init(mode: .shared, maximumMissWait: maximumMissWait),
                                  clock: { fixture.clock.now }, missLocks: MissLocks { _, count in waited.yield(count) })
        return (cache, waits)
    }

    @Test func aBurstOfMissesOfOneURLReachesTheOriginOnce() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let (cache, waits) = try Self.cache(fixture)
        let origin = GatedOrigin()
        let request = HTTPCacheFixture.request("/a")
        let leader = Task { try await cache.response(for: request, transport: origin.transport) }
        var arrivals = origin.arrivals.makeAsyncIterator()
        #expect(await arrivals.next() == 1)
        let followers = (0..<2).map { _ in Task { try await cache.response(for: request, transport: origin.transport) } }
        var waiting = waits.makeAsyncIterator()
        while let count = await waiting.next(), count < 2 {}
        // Another URL does not wait behind this one.
        let other = try await cache.response(for: HTTPCacheFixture.request("/b"), transport: origin.transport)
        #expect(other.outcome == .miss)
        origin.open()
        #expect(try await leader.value.outcome == .miss)
        for follower in followers {
            let answer = try await follower.value
            #expect(answer.outcome == .hit)
            #expect(String(decoding: answer.body, as: UTF8.self) == "answer 1 to /a")
        }
        #expect(origin.count == 2)
    }

    @Test func aWaiterAsksTheOriginItselfWhenTheFirstFailsOrTakesTooLong() async throws {
        for (fails, wait) in [(true, Duration.seconds(60)), (false, .milliseconds(50))] {
            let fixture = try HTTPCacheFixture()
            defer { fixture.remove() }
            let (cache, waits) = try Self.cache(fixture, maximumMissWait: wait)
            let origin = GatedOrigin(fails: fails)
            let request = HTTPCacheFixture.request("/a")
            let leader = Task { try await cache.response(for: request, transport: origin.transport) }
            var arrivals = origin.arrivals.makeAsyncIterator()
            #expect(await arrivals.next() == 1)
            let follower = Task { try await cache.response(for: request, transport: origin.transport) }
            var waiting = waits.makeAsyncIterator()
            _ = await waiting.next()
            if fails { origin.open() }
            let answer = try await follower.value
            #expect(answer.outcome == .miss, "fails: \(fails)")
            #expect(String(decoding: answer.body, as: UTF8.self) == "answer 2 to /a")
            origin.open()
            _ = try? await leader.value
            #expect(origin.count == 2)
        }
    }

    @Test func aStreamedAnswerNotReadToItsEndLetsTheWaitersGo() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let (cache, waits) = try Self.cache(fixture)
        let origin = HTTPCacheLargeBodyTests.StreamingOrigin(body: HTTPCacheLargeBodyTests.body(50_000))
        let request = HTTPCacheFixture.request("/a")
        var leader: HTTPCacheStreamingResponse? = try await cache.streamingResponse(for: request, transport: origin.transport)
        #expect(leader?.outcome == .miss)
        let follower = Task { try await cache.streamingResponse(for: request, transport: origin.transport) }
        var waiting = waits.makeAsyncIterator()
        _ = await waiting.next()
        leader = nil  // dropped unread: nothing will be stored
        let answer = try await follower.value
        #expect(answer.outcome == .miss)
        #expect(try await answer.body.collect() == HTTPCacheLargeBodyTests.body(50_000))
        #expect(origin.count == 2)
        #expect(leader == nil)
    }

    @Test func conditionalRequestsAndAZeroWaitDoNotWait() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        for (wait, fields) in [(Duration.zero, HTTPFields()), (.seconds(60), [.ifNoneMatch: "\"x\""])] {
            let (cache, _) = try Self.cache(fixture, maximumMissWait: wait)
            let origin = GatedOrigin()
            let request = HTTPCacheFixture.request("/c\(fields.isEmpty ? 0 : 1)", fields)
            let leader = Task { try await cache.response(for: request, transport: origin.transport) }
            var arrivals = origin.arrivals.makeAsyncIterator()
            #expect(await arrivals.next() == 1)
            // Straight to the origin, while the first request is still out.
            #expect(try await cache.response(for: request, transport: origin.transport).outcome == .miss)
            origin.open()
            _ = try await leader.value
        }
        #expect(throws: KVCacheError.self) {
            try HTTPCache(storage: fixture.storage, configuration: .init(maximumMissWait: .seconds(-1)))
        }
    }
}
#endif
