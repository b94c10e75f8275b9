import Dispatch
import Foundation
import Testing
@testable import KVCache
@testable import KVCacheRedis

/// A remote level that forwards every call to a real one, and says when a write has begun
/// (so a test can hold that write open on a stopped server and act meanwhile).
final class ObservedRemoteLevel: RemoteLevel, @unchecked Sendable {
    let base: RedisLevel
    let writeBegan = DispatchSemaphore(value: 0)

    init(_ base: RedisLevel) { self.base = base }

    func entry(forKey key: String) throws -> RemoteEntry? { try base.entry(forKey: key) }
    func entries(forKeys keys: [String]) throws -> [String: RemoteEntry] { try base.entries(forKeys: keys) }
    func setEntry(_ entry: RemoteEntry, forKey key: String) throws {
        writeBegan.signal()
        try base.setEntry(entry, forKey: key)
    }
    func removeEntry(forKey key: String) throws { try base.removeEntry(forKey: key) }
    func removeEntries(withPrefix prefix: String) throws { try base.removeEntries(withPrefix: prefix) }
    func subscribe(_ handler: @escaping @Sendable (RemoteChange) -> Void) throws { try base.subscribe(handler) }
    func stopSubscription() { base.stopSubscription() }
}

/// Servers of the tests' own that are killed, stopped (SIGSTOP) and restarted.
@Suite(.enabled(if: RedisTestServer.canStartServers, RedisTestServer.skipReason))
struct RedisFaultTests {
    /// kill -9 and a restart: calls fail, then reconnect; the subscriber subscribes again
    /// and the local values go (changes may have been missed meanwhile).
    @Test func afterTheServerIsKilledAndRestartedTheNodeReconnectsAndResynchronizes() async throws {
        // Off the test runner's threads: it blocks on outside processes for seconds.
        try await onOwnThread {
            let server = try OwnRedisServer()
            let node = try Node(namespace: "n", address: server.address, configureLevel: { $0.breakDuration = .zero })
            #expect(node.level.statistics.subscriptions == 1)
            try node.cache.setValue(bytes(10), forKey: "k")
            server.kill9()
            // The pooled connection is gone: the write is counted as failed, never thrown.
            try node.cache.setValue(bytes(11), forKey: "during")
            #expect(node.cache.statistics.remoteErrors >= 1)
            #expect(try node.cache.value(forKey: "k") == bytes(10))
            try server.start()
            #expect(node.level.waitForStatistics(timeout: .seconds(10)) { $0.subscriptions >= 2 })
            #expect(node.cache.statistics.remoteResynchronizations == 2)
            #expect(!node.cache.memory.contains("k"))
            #expect(try !node.cache.disk.contains("k"))
            try node.cache.setValue(bytes(12), forKey: "after")
            #expect(try node.level.entry(forKey: "after")?.data == bytes(12))
            server.stop()
        }
    }

    /// After a restart every idle connection is dead: the first call that finds one drops
    /// them all, so the next call connects anew instead of failing on the next dead one.
    @Test func afterARestartOneFailedCallDropsEveryIdleConnection() async throws {
        // Off the test runner's threads: it blocks on outside processes for seconds.
        try await onOwnThread {
            let server = try OwnRedisServer()
            let level = try RedisTestServer.level(namespace: "n", address: server.address) { $0.breakDuration = .zero }
            let pool = try #require(level.router.allPools.first)
            // Four connections in use at once, then idle.
            try pool.withConnection { _ in try pool.withConnection { _ in try pool.withConnection { _ in
                try pool.withConnection { _ in }
            } } }
            server.kill9()
            try server.start()
            #expect(throws: RemoteLevelError.self) { try level.entry(forKey: "k") }
            #expect(try level.entry(forKey: "k") == nil)
            #expect(level.statistics.failures == 1)
            server.stop()
        }
    }

    /// A server of a test's own that exits at start (here, refusing its arguments; in a
    /// race, finding its port taken) is reported as such at once, after a few new ports,
    /// rather than after 10 s of waiting for an answer.
    @Test func anOwnServerThatExitsAtStartIsReportedAtOnce() throws {
        let started = Date()
        #expect {
            _ = try OwnRedisServer(extraArguments: ["--no-such-directive", "1"])
        } throws: { error in
            guard case OwnRedisServer.ServerStart.exited = error else { return false }
            return true
        }
        #expect(Date().timeIntervalSince(started) < 10)
    }

    /// A hung server (SIGSTOP) keeps the subscriber's connection open but answers nothing:
    /// the subscriber's check notices, and once the server answers again it subscribes anew
    /// and the local values (which may have missed changes) go.
    @Test func theSubscriberNoticesAHungServerAndResynchronizesWhenItAnswers() async throws {
        // Off the test runner's threads: it blocks on outside processes for seconds.
        try await onOwnThread {
            let server = try OwnRedisServer()
            let node = try Node(namespace: "n", address: server.address, configureLevel: {
                $0.subscriptionCheckInterval = .milliseconds(50)
                $0.breakDuration = .milliseconds(10)
            })
            #expect(node.level.statistics.subscriptions == 1)
            try node.cache.setValue(bytes(10), forKey: "k")
            server.pause()
            #expect(node.level.waitForStatistics(timeout: .seconds(10)) { $0.subscriptionsLost >= 1 })
            server.resume()
            #expect(node.level.waitForStatistics(timeout: .seconds(10)) { $0.subscriptions >= 2 })
            #expect(node.cache.statistics.remoteResynchronizations >= 2)
            #expect(!node.cache.memory.contains("k"))
            server.stop()
        }
    }

    /// A hung server (SIGSTOP): one call waits for its timeout, then calls fail fast;
    /// local hits are served all along.
    @Test func aHungServerCostsOneTimeoutThenCallsFailFast() async throws {
        // Off the test runner's threads: it blocks on outside processes for seconds.
        try await onOwnThread {
            let server = try OwnRedisServer()
            let node = try Node(namespace: "n", address: server.address, configureLevel: {
                $0.commandTimeout = .milliseconds(200)
                $0.breakDuration = .seconds(3600)
            })
            try node.cache.setValue(bytes(10), forKey: "hot")
            server.pause()
            defer { server.stop() }
            #expect(try node.cache.value(forKey: "cold") == nil)
            #expect(node.cache.statistics.remoteErrors == 1)
            #expect(node.level.statistics.breakerOpenings == 1)
            #expect(try node.cache.value(forKey: "cold2") == nil)
            try node.cache.setValue(bytes(11), forKey: "new")
            #expect(node.level.statistics.rejectedByBreaker == 2)
            #expect(node.level.statistics.failures == 1)
            #expect(try node.cache.value(forKey: "hot") == bytes(10))
            #expect(try node.cache.value(forKey: "new") == bytes(11))
        }
    }

    /// Local hits never wait on the remote level: a write is held open on a stopped server
    /// while a memory hit and a disk hit of other keys complete.
    @Test func localHitsCompleteWhileARemoteWriteIsHeldOpen() async throws {
        // Off the test runner's threads: it blocks on outside processes for seconds.
        try await onOwnThread {
            let server = try OwnRedisServer()
            let level = try RedisTestServer.level(namespace: "n", address: server.address) {
                $0.commandTimeout = .seconds(30)
            }
            let observed = ObservedRemoteLevel(level)
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            var configuration = Cache<Data>.Configuration()
            configuration.remote = observed
            let cache = try Cache<Data>(directory: directory.url, coder: DataCoder(), configuration: configuration)
            defer { try? cache.close() }
            try cache.setValue(bytes(10, seed: 1), forKey: "hot")
            try cache.setValue(bytes(10, seed: 2), forKey: "warm")
            cache.memory.removeValue(forKey: "warm")
            for _ in 0..<2 { observed.writeBegan.wait() }
            server.pause()
            let writeDone = DispatchSemaphore(value: 0)
            Thread {
                try? cache.setValue(bytes(10, seed: 3), forKey: "slow")
                writeDone.signal()
            }.start()
            observed.writeBegan.wait()
            #expect(try cache.result(forKey: "hot").source == .memory)
            #expect(try cache.result(forKey: "warm").source == .disk)
            #expect(writeDone.wait(timeout: .now()) == .timedOut, "the remote write was still held open")
            server.resume()
            writeDone.wait()
            #expect(try level.entry(forKey: "slow")?.data == bytes(10, seed: 3))
            try cache.close()
            server.stop()
        }
    }
}
