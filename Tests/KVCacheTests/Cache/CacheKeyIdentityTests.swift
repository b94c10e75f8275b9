import Foundation
import Testing
@testable import KVCache

/// Keys are compared by their UTF-8 bytes in both levels (issue 12, item 4):
/// canonically equivalent spellings, equal as Swift `String`s, are different keys.
struct CacheKeyIdentityTests {
    /// "café" with a precomposed é (U+00E9) and with e + combining acute (U+0301).
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test func thePremise() {
        #expect(Self.composed == Self.decomposed)
        #expect(Array(Self.composed.utf8) != Array(Self.decomposed.utf8))
    }

    @Test func equivalentSpellingsAreTwoKeysInMemoryAndOnDisk() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()

        try cache.setValue(bytes(10, seed: 1), forKey: Self.composed)
        try cache.setValue(bytes(10, seed: 2), forKey: Self.decomposed)

        let composed = try cache.result(forKey: Self.composed)
        let decomposed = try cache.result(forKey: Self.decomposed)
        #expect(composed.source == .memory)
        #expect(composed.value == bytes(10, seed: 1))
        #expect(decomposed.source == .memory)
        #expect(decomposed.value == bytes(10, seed: 2))
        #expect(cache.memory.count == 2)
        #expect(cache.memory.value(forKey: Self.composed) == bytes(10, seed: 1))
        try cache.close()

        let reopened = try fixture.make()
        let composedOnDisk = try reopened.result(forKey: Self.composed)
        let decomposedOnDisk = try reopened.result(forKey: Self.decomposed)
        #expect(composedOnDisk.source == .disk)
        #expect(composedOnDisk.value == bytes(10, seed: 1))
        #expect(decomposedOnDisk.source == .disk)
        #expect(decomposedOnDisk.value == bytes(10, seed: 2))
        // Both promoted, each under its own key.
        #expect(try reopened.result(forKey: Self.composed).value == bytes(10, seed: 1))
        #expect(try reopened.result(forKey: Self.decomposed).value == bytes(10, seed: 2))

        try reopened.removeValue(forKey: Self.composed)
        #expect(try !reopened.contains(Self.composed))
        #expect(try reopened.value(forKey: Self.decomposed) == bytes(10, seed: 2))
    }

    @Test func theMemoryLevelReportsEvictionsWithTheKeysAsStored() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let evicted = Locked<[String]>([])
        let cache = try fixture.make {
            $0.memory.countLimit = 1
            $0.memory.policy = .lru
            $0.memory.releasesValuesInBackground = false
            $0.memory.onEviction = { key, _, reason in if reason == .count { evicted.withLock { $0.append(key) } } }
        }

        try cache.setValue(bytes(10, seed: 1), forKey: Self.composed)
        try cache.setValue(bytes(10, seed: 2), forKey: Self.decomposed)  // a second key: evicts the first

        #expect(evicted.value.map { Array($0.utf8) } == [Array(Self.composed.utf8)])
        #expect(cache.memory.value(forKey: Self.decomposed) == bytes(10, seed: 2))
        #expect(cache.memory.value(forKey: Self.composed) == nil)
        #expect(cache.statistics.memory.evictions[.count] == 1)
    }

    @Test func aBackgroundWriteOfOneSpellingLeavesTheOtherAlone() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        try cache.setValue(bytes(10, seed: 1), forKey: Self.composed)

        try cache.setValue(bytes(10, seed: 2), forKey: Self.decomposed, diskWrite: .background)
        cache.memory.removeAll()

        #expect(try cache.value(forKey: Self.composed) == bytes(10, seed: 1))
        #expect(try cache.value(forKey: Self.decomposed) == bytes(10, seed: 2))
        try cache.waitForBackgroundWrites()
        #expect(try cache.disk.value(forKey: Self.composed) == bytes(10, seed: 1))
        #expect(try cache.disk.value(forKey: Self.decomposed) == bytes(10, seed: 2))
    }

    @Test func concurrentLoadsOfEquivalentSpellingsComputeTwice() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let (joins, joined) = AsyncStream<Int>.makeStream()
        let cache = try fixture.make(coder: DataCoder(), didJoinLoad: { _, count in joined.yield(count) })
        let (gate, opener) = AsyncStream<Void>.makeStream()
        var joinCounts = joins.makeAsyncIterator()

        // The first load waits for the gate, so the second starts while it runs.
        let first = Task {
            try await cache.value(forKey: Self.composed) {
                for await _ in gate { break }
                return bytes(10, seed: 1)
            }
        }
        let firstJoin = await joinCounts.next()
        let second = Task {
            try await cache.value(forKey: Self.decomposed) { bytes(10, seed: 2) }
        }
        // 1 if the second load has a flight of its own, 2 if it joined the first's.
        let secondJoin = await joinCounts.next()
        opener.yield()
        opener.finish()

        let firstValue = try await first.value
        let secondValue = try await second.value
        print("joins: \(String(describing: firstJoin)), \(String(describing: secondJoin));",
              "computations: \(cache.statistics.computations)")
        #expect(firstJoin == 1)
        #expect(secondJoin == 1)
        #expect(firstValue == bytes(10, seed: 1))
        #expect(secondValue == bytes(10, seed: 2))
        #expect(cache.statistics.computations == 2)
        #expect(try await cache.value(forKey: Self.composed) == bytes(10, seed: 1))
        #expect(try await cache.value(forKey: Self.decomposed) == bytes(10, seed: 2))
    }
}
