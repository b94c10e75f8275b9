import Foundation
import Testing
@testable import KVCache
@testable import KVCacheRedis

/// The Redis level alone, against the real server of `KVCACHE_REDIS_URL`.
@Suite(.enabled(if: RedisTestServer.url != nil, RedisTestServer.skipReason))
struct RedisLevelTests {
    @Test func aValueComesBackWithItsExpirationUnderTheNamespacedKey() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let level = try RedisTestServer.level(namespace: namespace)
        let deadline = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 60).rounded(.up))
        try level.setEntry(RemoteEntry(data: bytes(1000), expiration: .at(deadline)), forKey: "a")
        try level.setEntry(RemoteEntry(data: Data(), expiration: .never), forKey: "empty")
        #expect(try level.entry(forKey: "a") == RemoteEntry(data: bytes(1000), expiration: .at(deadline)))
        #expect(try level.entry(forKey: "empty") == RemoteEntry(data: Data(), expiration: .never))
        #expect(try level.entry(forKey: "missing") == nil)
        let raw = try RedisTestServer.raw()
        guard case .integer(let ttl) = try raw.run("PTTL", "kvcache:\(namespace):a") else { Issue.record("no PTTL"); return }
        #expect(ttl > 50_000 && ttl <= 61_000)
        #expect(try raw.run("PTTL", "kvcache:\(namespace):empty") == .integer(-1))
        let stored = try #require(try raw.run("GET", "kvcache:\(namespace):a").data)
        #expect(stored.prefix(5) == Data("KVCR".utf8) + Data([1]))
        try level.removeEntry(forKey: "a")
        #expect(try level.entry(forKey: "a") == nil)
    }

    @Test func aValueAlreadyExpiredRemovesTheOldOne() throws {
        let level = try RedisTestServer.level(namespace: RedisTestServer.uniqueNamespace())
        try level.setEntry(RemoteEntry(data: bytes(10), expiration: .never), forKey: "a")
        try level.setEntry(RemoteEntry(data: bytes(10), expiration: .at(Date(timeIntervalSinceNow: -1))), forKey: "a")
        #expect(try level.entry(forKey: "a") == nil)
    }

    @Test func manyKeysComeInOneRoundTrip() throws {
        let level = try RedisTestServer.level(namespace: RedisTestServer.uniqueNamespace())
        for index in 0..<100 { try level.setEntry(RemoteEntry(data: bytes(100, seed: UInt8(index)), expiration: .never), forKey: "k\(index)") }
        let before = level.statistics
        let found = try level.entries(forKeys: (0..<120).map { "k\($0)" })
        #expect(level.statistics.calls == before.calls + 1)
        #expect(level.statistics.roundTrips == before.roundTrips + 1)
        #expect(found.count == 100)
        #expect(found["k7"]?.data == bytes(100, seed: 7))
        #expect(found["k110"] == nil)
    }

    /// Another program's bytes under our key, a key of another type, and a later format
    /// version: each an error (counted), never a value.
    @Test func bytesKVCacheDidNotWriteAreAnErrorNotAValue() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let level = try RedisTestServer.level(namespace: namespace)
        let raw = try RedisTestServer.raw()
        try raw.run("SET", "kvcache:\(namespace):plain", "hello, world")
        try raw.run("RPUSH", "kvcache:\(namespace):list", "x")
        try raw.run("SET", "kvcache:\(namespace):later", "KVCR\u{9}\0\0\0\0\0\0\0\0\0value")
        #expect { try level.entry(forKey: "plain") } throws: { ($0 as? RemoteLevelError)?.code == .unexpectedReply }
        #expect { try level.entry(forKey: "list") } throws: { ($0 as? RemoteLevelError)?.code == .serverError }
        #expect { try level.entry(forKey: "later") } throws: { ($0 as? RemoteLevelError)?.code == .unexpectedReply }
        #expect(level.statistics.failures == 3)
        // In a batch, the others still come back.
        try level.setEntry(RemoteEntry(data: bytes(5), expiration: .never), forKey: "good")
        #expect(try level.entries(forKeys: ["plain", "list", "good"]).keys.sorted() == ["good"])
    }

    /// Sets reuse their connection's scratch memory up to `RedisConnection.largestScratch`:
    /// values on both sides of it, larger then smaller (no bytes of the last one may show),
    /// each stored as exactly its header and bytes.
    @Test func valuesLargeAndSmallOnOneConnectionComeBackExactly() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let level = try RedisTestServer.level(namespace: namespace) { $0.maxIdleConnections = 1 }
        let raw = try RedisTestServer.raw()
        let limit = RedisConnection.largestScratch - RemoteValueFormat.headerSize
        let uncopied = RedisConnection.smallestUncopiedValue
        let counts = [2 << 20, limit + 1, limit, 100_000, 5000, 10, 0, uncopied, uncopied - 1, 20_000]
        var read: [Data] = []
        for (index, count) in counts.enumerated() {
            let value = bytes(count, seed: UInt8(index))
            try level.setEntry(RemoteEntry(data: value, expiration: .never), forKey: "v\(index)")
            let entry = try #require(try level.entry(forKey: "v\(index)"))
            #expect(entry.data == value, "\(count) bytes")
            read.append(entry.data)
            let stored = try #require(try raw.run("GET", "kvcache:\(namespace):v\(index)").data)
            #expect(stored.count == RemoteValueFormat.headerSize + count)
        }
        // Values read without a copy own hiredis's reply: they outlive later calls and the level.
        for index in counts.indices { try level.removeEntry(forKey: "v\(index)") }
        _ = consume level
        for (index, count) in counts.enumerated() { #expect(read[index] == bytes(count, seed: UInt8(index))) }
        read[3][0] ^= 0xFF
        #expect(read[3][0] == bytes(1, seed: 3)[0] ^ 0xFF)
    }

    /// Threads setting at once each use a connection (and scratch memory) of their own.
    @Test func concurrentSetsDoNotShareScratchMemory() async throws {
        let level = try RedisTestServer.level(namespace: RedisTestServer.uniqueNamespace())
        try await onOwnThread {
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for round in 0..<25 {
                    let value = bytes(1000 + thread * 3000 + round, seed: UInt8(thread))
                    try? level.setEntry(RemoteEntry(data: value, expiration: .never), forKey: "t\(thread)-\(round)")
                }
            }
        }
        for thread in 0..<8 {
            for round in 0..<25 {
                #expect(try level.entry(forKey: "t\(thread)-\(round)")?.data == bytes(1000 + thread * 3000 + round, seed: UInt8(thread)))
            }
        }
    }

    @Test func aValueOverTheLimitIsRefused() throws {
        let level = try RedisTestServer.level(namespace: RedisTestServer.uniqueNamespace()) { $0.maxValueSize = 100 }
        try level.setEntry(RemoteEntry(data: bytes(100), expiration: .never), forKey: "fits")
        #expect { try level.setEntry(RemoteEntry(data: bytes(101), expiration: .never), forKey: "big") } throws: {
            ($0 as? RemoteLevelError)?.code == .valueTooLarge
        }
        #expect(level.statistics.valuesTooLarge == 1)
        #expect(try level.entry(forKey: "fits") != nil)
    }

    @Test func removingByPrefixTakesOnlyThoseKeysOfThisNamespace() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let level = try RedisTestServer.level(namespace: namespace)
        let other = try RedisTestServer.level(namespace: namespace + "x")
        let entry = RemoteEntry(data: bytes(3), expiration: .never)
        for key in ["a*b", "a*c", "a?", "a[1]", "ab", "b"] { try level.setEntry(entry, forKey: key) }
        try other.setEntry(entry, forKey: "a*b")
        try level.removeEntries(withPrefix: "a*")
        #expect(try level.entries(forKeys: ["a*b", "a*c", "a?", "a[1]", "ab", "b"]).keys.sorted() == ["a?", "a[1]", "ab", "b"])
        try level.removeEntries(withPrefix: "")
        #expect(try level.entries(forKeys: ["a?", "a[1]", "ab", "b"]).isEmpty)
        #expect(try other.entry(forKey: "a*b") != nil)
    }

    /// A server that does not answer costs one failure, then calls fail fast.
    @Test func anUnreachableServerOpensTheBreaker() throws {
        let port = try OwnRedisServer.freePort()
        let level = try RedisTestServer.level(namespace: "n", address: RedisAddress(host: "127.0.0.1", port: port))
        #expect { try level.entry(forKey: "a") } throws: { ($0 as? RemoteLevelError)?.code == .unavailable }
        #expect { try level.entry(forKey: "a") } throws: { ($0 as? RemoteLevelError)?.code == .circuitOpen }
        #expect { try level.setEntry(RemoteEntry(data: Data(), expiration: .never), forKey: "a") } throws: {
            ($0 as? RemoteLevelError)?.code == .circuitOpen
        }
        #expect(level.statistics.breakerOpenings == 1)
        #expect(level.statistics.rejectedByBreaker == 2)
        #expect(level.isFailingFast)
    }
}

/// Settings and addresses a level cannot use: a typed error at creation.
@Suite struct RedisLevelConfigurationTests {
    @Test(arguments: ["", "a b", "{x}", "tab\t", String(repeating: "n", count: 201), "é"])
    func aBadNamespaceIsRefused(namespace: String) {
        #expect(throws: RemoteLevelError.self) {
            try RedisLevel(configuration: .init(address: RedisAddress(host: "127.0.0.1"), namespace: namespace))
        }
    }

    @Test func settingsOutOfRangeAreRefused() {
        let edits: [(inout RedisLevel.Configuration) -> Void] = [
            { $0.connectTimeout = .zero }, { $0.commandTimeout = .seconds(-1) }, { $0.commandTimeout = .seconds(3601) },
            { $0.breakDuration = .seconds(-1) }, { $0.breakDuration = .seconds(86_401) },
            { $0.maxValueSize = -1 }, { $0.maxValueSize = RedisLevel.largestValueSize + 1 }, { $0.maxValueSize = .max },
            { $0.maxIdleConnections = -1 }, { $0.maxIdleConnections = .max },
            { $0.subscriptionCheckInterval = .zero }, { $0.subscriptionCheckInterval = .milliseconds(9) },
            { $0.subscriptionCheckInterval = .seconds(3601) }, { $0.subscriptionCheckInterval = .seconds(-1) },
            { $0.subscriptionRetryInterval = .milliseconds(9) }, { $0.subscriptionRetryInterval = .seconds(3601) },
            { $0.address.port = 0 }, { $0.address.port = 65_536 }, { $0.address.host = "" }, { $0.address.database = -1 },
        ]
        for edit in edits {
            var configuration = RedisLevel.Configuration(address: RedisAddress(host: "127.0.0.1"), namespace: "n")
            edit(&configuration)
            #expect(throws: RemoteLevelError.self) { try RedisLevel(configuration: configuration) }
        }
        var edges = RedisLevel.Configuration(address: RedisAddress(host: "127.0.0.1"), namespace: "n")
        edges.maxValueSize = 0
        edges.breakDuration = .zero
        edges.maxIdleConnections = 0
        edges.subscriptionRetryInterval = .milliseconds(10)
        #expect(throws: Never.self) { try RedisLevel(configuration: edges) }
    }

    @Test func addressesParse() throws {
        #expect(try RedisAddress("redis://127.0.0.1:6380") == RedisAddress(host: "127.0.0.1", port: 6380))
        #expect(try RedisAddress("redis://:secret@host/3") == RedisAddress(host: "host", port: 6379, password: "secret", database: 3))
        #expect(try RedisAddress("host:1") == RedisAddress(host: "host", port: 1))
        for bad in ["", "redis://", "host:0", "host:65536", "host:abc", "host/x", "host/-1", ":80"] {
            #expect(throws: RemoteLevelError.self, "\(bad)") { try RedisAddress(bad) }
        }
    }

    @Test func theBreakerLetsOneProbeThroughAfterItsDuration() throws {
        let breaker = CircuitBreaker(breakDuration: .seconds(2))
        try breaker.permit(now: 0)
        breaker.failed(now: 10)
        #expect(throws: RemoteLevelError.self) { try breaker.permit(now: 11) }
        try breaker.permit(now: 12)  // the probe
        #expect(throws: RemoteLevelError.self) { try breaker.permit(now: 12.5) }  // others wait for it
        breaker.failed(now: 13)  // the probe failed: open again
        #expect(throws: RemoteLevelError.self) { try breaker.permit(now: 14) }
        try breaker.permit(now: 15)
        breaker.succeeded()
        try breaker.permit(now: 15)
        #expect(breaker.counts.openings == 2)
        #expect(!breaker.isOpen)
    }
}
