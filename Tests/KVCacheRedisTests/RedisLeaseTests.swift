import Foundation
import Testing
@testable import KVCache
@testable import KVCacheRedis

/// A node whose cache loads under remote leases (`remoteLoadLease`), and tells the test when
/// one of its loads starts waiting for another node's value.
final class LeaseNode: @unchecked Sendable {
    let directory = TemporaryDirectory("lease")
    let level: RedisLevel
    let cache: Cache<Data>
    let waiting = AsyncEvent()

    init(namespace: String, lease: Duration) throws {
        level = try RedisTestServer.level(namespace: namespace)
        var configuration = Cache<Data>.Configuration()
        configuration.disk.autoTrimInterval = nil
        configuration.remote = level
        configuration.remoteLoadLease = lease
        let waiting = waiting
        cache = try Cache(directory: directory.url, name: nil, coder: DataCoder(), configuration: configuration,
                          memoryClock: .system, didWaitForRemoteLease: { _ in waiting.fire() })
    }

    deinit {
        try? cache.close()
        directory.remove()
    }
}

/// Something that happens once, which async code can wait for.
final class AsyncEvent: Sendable {
    private let state = MutexBox<(fired: Bool, lastID: Int, waiters: [Int: CheckedContinuation<Bool, Never>])>(
        (false, 0, [:]))

    func fire() {
        let waiters = state.withLock { state in
            state.fired = true
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Waits until it happened (true), or for `timeout` at most (false: a test that would
    /// otherwise hang fails instead).
    @discardableResult
    func wait(atMost timeout: Duration = .seconds(120)) async -> Bool {
        await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
            let id = state.withLock { state -> Int? in
                if state.fired { return nil }
                state.lastID += 1
                state.waiters[state.lastID] = waiter
                return state.lastID
            }
            guard let id else { return waiter.resume(returning: true) }
            Task {
                try? await Task.sleep(for: timeout)
                self.state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: false)
            }
        }
    }
}

/// The distributed single flight (issue 16): `RedisLevel` leases (`SET NX PX`, a
/// compare-and-delete release) and `Cache.Configuration.remoteLoadLease`.
@Suite(.enabled(if: RedisTestServer.url != nil, RedisTestServer.skipReason))
struct RedisLeaseTests {
    @Test func aLeaseHasOneHolderUntilReleasedAndOnlyItsHolderReleasesIt() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let level = try RedisTestServer.level(namespace: namespace)
        let other = try RedisTestServer.level(namespace: namespace)
        let raw = try RedisTestServer.raw()
        let first = try #require(try level.acquireLease(forKey: "k", duration: .seconds(10)))
        #expect(try other.acquireLease(forKey: "k", duration: .seconds(10)) == nil)
        #expect(try level.acquireLease(forKey: "k", duration: .seconds(10)) == nil, "not reentrant")
        guard case .integer(let milliseconds) = try raw.run("PTTL", "kvcache-lease:\(namespace):k") else {
            Issue.record("the lease key has no expiration")
            return
        }
        #expect((9_000...10_000).contains(milliseconds))
        // Another key, and the value keys, are apart.
        #expect(try other.acquireLease(forKey: "k2", duration: .seconds(10)) != nil)
        try level.setEntry(RemoteEntry(data: bytes(3), expiration: .never), forKey: "k")
        try level.removeEntries(withPrefix: "")
        #expect(try other.acquireLease(forKey: "k", duration: .seconds(10)) == nil)

        // A token that is not the holder's releases nothing; the holder's does.
        try other.releaseLease(RemoteLease(key: "k", token: Data("not-the-token".utf8)))
        #expect(try other.acquireLease(forKey: "k", duration: .seconds(10)) == nil)
        try level.releaseLease(first)
        let second = try #require(try other.acquireLease(forKey: "k", duration: .seconds(10)))
        #expect(second.token != first.token)

        // Once a lease has gone (expired: deleted here) and another took it, the old holder's
        // late release leaves the new holder's lease alone.
        try raw.run("DEL", "kvcache-lease:\(namespace):k")
        let third = try #require(try level.acquireLease(forKey: "k", duration: .seconds(10)))
        try other.releaseLease(second)
        #expect(try other.acquireLease(forKey: "k", duration: .seconds(10)) == nil)
        try level.releaseLease(third)
    }

    @Test(arguments: [Duration.zero, .milliseconds(-1), .seconds(86_401), .seconds(Int64.max)])
    func badLeaseDurationsAreRejected(_ duration: Duration) throws {
        let level = try RedisTestServer.level(namespace: RedisTestServer.uniqueNamespace())
        #expect(throws: RemoteLevelError(.invalidArgument, "a lease lasts more than zero and at most a day, not \(duration)")) {
            _ = try level.acquireLease(forKey: "k", duration: duration)
        }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var configuration = Cache<Data>.Configuration()
        configuration.remote = level
        configuration.remoteLoadLease = duration
        #expect(throws: KVCacheError.invalidArgument("remoteLoadLease must be more than zero and at most an hour")) {
            _ = try Cache(directory: directory.url, coder: DataCoder(), configuration: configuration)
        }
    }

    @Test func oneNodeComputesAndTheOtherWaitsForItsValue() async throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try LeaseNode(namespace: namespace, lease: .seconds(30))
        let b = try LeaseNode(namespace: namespace, lease: .seconds(30))
        let computations = MutexBox(0)
        let aComputing = AsyncEvent()
        let release = AsyncEvent()
        let first = Task {
            try await a.cache.result(forKey: "k", expiration: .after(.seconds(60))) {
                computations.withLock { $0 += 1 }
                aComputing.fire()
                await release.wait()
                return bytes(5, seed: 1)
            }
        }
        defer { release.fire() }
        // a holds the lease, its computation open until the test releases it.
        try #require(await aComputing.wait())
        let second = Task {
            try await b.cache.result(forKey: "k", expiration: .after(.seconds(60))) {
                computations.withLock { $0 += 1 }
                return bytes(5, seed: 2)
            }
        }
        try #require(await b.waiting.wait(), "b did not wait for a's lease")
        release.fire()
        let computed = try await first.value
        let waitedFor = try await second.value
        guard case .computed(let value) = computed else { Issue.record("a did not compute: \(computed)"); return }
        #expect(value == bytes(5, seed: 1))
        #expect(waitedFor.value == bytes(5, seed: 1), "b got a's value")
        #expect(!waitedFor.isStale)
        #expect(computations.withLock { $0 } == 1, "one computation for both nodes")
        #expect(b.cache.statistics.remoteLeaseWaits == 1)
        #expect(b.cache.statistics.remoteLeaseTimeouts == 0)
        #expect(b.cache.statistics.computations == 0)
        #expect(a.cache.statistics.remoteLeaseWaits == 0)
        // a released the lease before its load returned.
        #expect(try a.level.acquireLease(forKey: "k", duration: .seconds(10)) != nil)
    }

    @Test func whenTheLeaseHolderNeverStoresTheWaitingNodeComputesOnceTheLeaseExpires() async throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let holder = try RedisTestServer.level(namespace: namespace)
        let b = try LeaseNode(namespace: namespace, lease: .seconds(30))
        // A node that took the lease and died. Its lease outlives any slow run (the test ends
        // it below): under a loaded sanitizer run, b's load may start tens of seconds later.
        #expect(try holder.acquireLease(forKey: "k", duration: .seconds(600)) != nil)
        let computations = MutexBox(0)
        let load = Task {
            try await b.cache.result(forKey: "k") {
                computations.withLock { $0 += 1 }
                return bytes(7)
            }
        }
        try #require(await b.waiting.wait(), "b did not wait for the lease")
        // The dead holder's lease expires now (Redis expires it), not in 30 s.
        try RedisTestServer.raw().run("PEXPIRE", "kvcache-lease:\(namespace):k", "1")
        let result = try await load.value
        guard case .computed(let value) = result else { Issue.record("b did not compute: \(result)"); return }
        #expect(value == bytes(7))
        #expect(computations.withLock { $0 } == 1)
        #expect(b.cache.statistics.remoteLeaseWaits == 1)
        #expect(b.cache.statistics.remoteLeaseTimeouts == 1)
        #expect(try holder.entry(forKey: "k")?.data == bytes(7))
    }

    /// A holder that keeps its lease (a computation longer than the lease's duration, or a
    /// lease taken by hand) delays a waiting node by the lease's duration at most.
    @Test func aWaitThatLastsTheLeasesDurationComputesWithoutTheLease() async throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let holder = try RedisTestServer.level(namespace: namespace)
        let b = try LeaseNode(namespace: namespace, lease: .milliseconds(200))
        // Far longer than the test, however slow the machine: b must find it held throughout.
        let held = try #require(try holder.acquireLease(forKey: "k", duration: .seconds(600)))
        let result = try await b.cache.result(forKey: "k") { bytes(8) }
        #expect(result.value == bytes(8))
        #expect(b.cache.statistics.remoteLeaseWaits == 1)
        #expect(b.cache.statistics.remoteLeaseTimeouts == 1)
        #expect(b.cache.statistics.computations == 1)
        // Computed without the lease: the holder still has it.
        #expect(try b.level.acquireLease(forKey: "k", duration: .seconds(1)) == nil)
        try holder.releaseLease(held)
    }

    @Test func whenTheLeaseHoldersComputationThrowsTheWaitingNodeTakesOverWithoutWaitingForTheLeaseToExpire() async throws {
        struct SourceDown: Error {}
        let namespace = RedisTestServer.uniqueNamespace()
        // A long lease: the bound below is half of it, far above a takeover's milliseconds
        // even when sanitized suites beside it starve the test's tasks for seconds.
        let a = try LeaseNode(namespace: namespace, lease: .seconds(120))
        let b = try LeaseNode(namespace: namespace, lease: .seconds(120))
        let aComputing = AsyncEvent()
        let release = AsyncEvent()
        let first = Task {
            try await a.cache.result(forKey: "k") {
                aComputing.fire()
                await release.wait()
                throw SourceDown()
            }
        }
        defer { release.fire() }
        try #require(await aComputing.wait())
        let started = ContinuousClock.now
        let second = Task { try await b.cache.result(forKey: "k") { bytes(9) } }
        try #require(await b.waiting.wait(), "b did not wait for a's lease")
        release.fire()
        await #expect(throws: SourceDown.self) { try await first.value }
        let taken = try await second.value
        guard case .computed(let value) = taken else { Issue.record("b did not compute: \(taken)"); return }
        #expect(value == bytes(9))
        #expect(ContinuousClock.now - started < .seconds(60), "a released its lease when its computation threw")
        #expect(b.cache.statistics.remoteLeaseWaits == 1)
        #expect(b.cache.statistics.remoteLeaseTimeouts == 1)
    }
}
