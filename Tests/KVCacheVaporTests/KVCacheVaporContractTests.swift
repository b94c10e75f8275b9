#if Vapor
import Foundation
import KVCache
import KVCacheVapor
import Testing
import Vapor
import VaporTesting

/// Vapor's `Cache` contract against the KVCache driver: Vapor 4.122.3's own cache tests
/// (`CacheTests`, `AsyncCacheTests`), then what they leave open: other types, nil, zero,
/// negative and huge lifetimes, bad keys, values that do not encode, huge values.
@Suite struct KVCacheVaporContractTests {
    struct Profile: Codable, Equatable, Sendable {
        var name: String
        var visits: Int
        var joined: Date
    }

    /// Vapor's `CacheTests.testInMemoryCache`, through the EventLoopFuture API (`.get()`
    /// rather than `.wait()`; polling rather than `sleep(2)` for the expiry).
    @Test func vaporsFutureCacheTestPasses() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            #expect(try await app.cache.get("foo", as: String.self).get() == nil)
            try await app.cache.set("foo", to: "bar").get()
            #expect(try await app.cache.get("foo", as: String.self).get() == "bar")

            // Expiration
            let setAt = ContinuousClock.now
            try await app.cache.set("foo2", to: "bar2", expiresIn: .seconds(1)).get()
            let read = try await app.cache.get("foo2", as: String.self).get()
            // Unless the machine stalled the calls past the second, the value is there.
            #expect(read == "bar2" || ContinuousClock.now - setAt >= .seconds(1))
            #expect(try await eventually { try await app.cache.get("foo2", as: String.self).get() == nil })

            // Reset value
            try await app.cache.set("foo3", to: "bar3").get()
            #expect(try await app.cache.get("foo3", as: String.self).get() == "bar3")
            try await app.cache.delete("foo3").get()
            #expect(try await app.cache.get("foo3", as: String.self).get() == nil)
        }
    }

    /// Vapor's `AsyncCacheTests.testInMemoryCache`, through the async variants.
    @Test func vaporsAsyncCacheTestPasses() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            let value1 = try await app.cache.get("foo", as: String.self)
            #expect(value1 == nil)
            try await app.cache.set("foo", to: "bar")
            let value2: String? = try await app.cache.get("foo")
            #expect(value2 == "bar")

            let setAt = ContinuousClock.now
            try await app.cache.set("foo2", to: "bar2", expiresIn: .seconds(1))
            let value3: String? = try await app.cache.get("foo2")
            #expect(value3 == "bar2" || ContinuousClock.now - setAt >= .seconds(1))
            #expect(try await eventually { try await app.cache.get("foo2", as: String.self) == nil })

            try await app.cache.set("foo3", to: "bar3")
            let value5: String? = try await app.cache.get("foo3")
            #expect(value5 == "bar3")
            try await app.cache.delete("foo3")
            #expect(try await app.cache.get("foo3", as: String.self) == nil)
        }
    }

    @Test func valuesOfDifferentTypesShareOneCache() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        let profile = Profile(name: "ada", visits: 3, joined: Date(timeIntervalSince1970: 1_700_000_000))
        try await withKVCacheApp(directory: dir.url) { app in
            try await app.cache.set("int", to: 42)
            try await app.cache.set("string", to: "forty-two")
            try await app.cache.set("bool", to: true)
            try await app.cache.set("list", to: ["a", "b"])
            try await app.cache.set("profile", to: profile)
            #expect(try await app.cache.get("int", as: Int.self) == 42)
            #expect(try await app.cache.get("string", as: String.self) == "forty-two")
            #expect(try await app.cache.get("bool", as: Bool.self) == true)
            #expect(try await app.cache.get("list", as: [String].self) == ["a", "b"])
            #expect(try await app.cache.get("profile", as: Profile.self) == profile)
            // From disk too, once memory has let them go.
            app.caches.kvcache?.memory.removeAll()
            #expect(try await app.cache.get("profile", as: Profile.self) == profile)
            #expect(try await app.cache.get("int", as: Int.self) == 42)
        }
    }

    /// A get as another type throws the decoder's error, as Vapor's Redis and Fluent drivers
    /// do, and the stored value stays: a get as its own type still returns it.
    @Test func aGetAsAnotherTypeThrowsAndKeepsTheValue() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            try await app.cache.set("n", to: 7)
            await #expect(throws: DecodingError.self) { try await app.cache.get("n", as: String.self) }
            await #expect(throws: DecodingError.self) { try await app.cache.get("n", as: Profile.self) }
            #expect(try await app.cache.get("n", as: Int.self) == 7)
            // The same from disk, where a failed decode must not remove the entry either.
            app.caches.kvcache?.memory.removeAll()
            await #expect(throws: DecodingError.self) { try await app.cache.get("n", as: String.self).get() }
            #expect(try await app.caches.kvcache?.contains("n") == true)
            #expect(try await app.cache.get("n", as: Int.self) == 7)
        }
    }

    @Test func settingNilRemovesTheValueEverywhere() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            try await app.cache.set("k", to: "v")
            try await app.cache.set("k", to: String?.none)
            #expect(try await app.cache.get("k", as: String.self) == nil)
            #expect(try await app.caches.kvcache?.contains("k") == false)
            // nil of another type removes it too, and removing a missing key is no error.
            try await app.cache.set("k", to: "v")
            try await app.cache.set("k", to: Int?.none, expiresIn: .minutes(5))
            #expect(try await app.cache.get("k", as: String.self) == nil)
            try await app.cache.delete("never-set")
        }
    }

    /// Zero and negative lifetimes have ended as the value is stored: the key is left
    /// without a value (an older one is removed), as a get just after any expiry would find.
    @Test func zeroAndNegativeLifetimesLeaveNoValue() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            for time: CacheExpirationTime in [.seconds(0), .seconds(-1), .minutes(-3), .hours(0), .days(Int.min)] {
                try await app.cache.set("k", to: "old")
                try await app.cache.set("k", to: "new", expiresIn: time)
                #expect(try await app.cache.get("k", as: String.self) == nil, "\(time)")
                #expect(try await app.caches.kvcache?.contains("k") == false, "\(time)")
            }
        }
    }

    /// Lifetimes whose seconds overflow `Int` (where `CacheExpirationTime.seconds` traps) or
    /// pass a century never expire; others expire when they say.
    @Test func hugeLifetimesNeverExpireAndDoNotTrap() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            for time: CacheExpirationTime in [.days(Int.max), .seconds(Int.max), .hours(Int.max / 1_000), .days(36_501)] {
                try await app.cache.set("k", to: "v", expiresIn: time)
                #expect(try await app.cache.get("k", as: String.self) == "v")
                #expect(try await app.caches.kvcache?.expiration(forKey: "k") == .never, "\(time)")
            }
            try await app.cache.set("k", to: "v", expiresIn: .days(2))
            guard case .at(let date)? = try await app.caches.kvcache?.expiration(forKey: "k") else {
                Issue.record("no deadline")
                return
            }
            #expect(abs(date.timeIntervalSinceNow - 2 * 86_400) < 60)
        }
    }

    @Test func badKeysFailWithATypedError() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            let long = String(repeating: "k", count: 100_000)
            for key in ["", long] {
                await #expect(throws: KVCacheError.self) { try await app.cache.set(key, to: "v") }
                let error = await #expect(throws: KVCacheError.self) { try await app.cache.get(key, as: String.self) }
                #expect(error?.code == .invalidKey)
            }
        }
    }

    /// A value the coder cannot encode fails the set with the encoder's error and leaves the
    /// key's value as it was.
    @Test func aValueThatDoesNotEncodeFailsAndChangesNothing() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            try await app.cache.set("x", to: 1.5)
            await #expect(throws: EncodingError.self) { try await app.cache.set("x", to: Double.nan) }
            #expect(try await app.cache.get("x", as: Double.self) == 1.5)
        }
    }

    /// Values far larger than the memory level's cost limit and the inline threshold round-trip.
    @Test func hugeValuesRoundTrip() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        var configuration = KVCache.Cache<Data>.Configuration()
        configuration.memory.costLimit = 1 << 20
        let big = String(repeating: "0123456789abcdef", count: 2 << 20)  // 32 MiB
        let blob = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try await withKVCacheApp(directory: dir.url, configuration: configuration) { app in
            try await app.cache.set("big", to: big)
            try await app.cache.set("blob", to: blob)
            #expect(try await app.cache.get("big", as: String.self) == big)
            #expect(try await app.cache.get("blob", as: Data.self) == blob)
            #expect(app.caches.kvcache!.memory.totalCost <= 1 << 20)
        }
    }

    /// Many distinct keys: the memory level stays within its count limit; the disk keeps all.
    @Test func memoryStaysWithinItsCountLimit() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        var configuration = KVCache.Cache<Data>.Configuration()
        configuration.memory.countLimit = 32
        try await withKVCacheApp(directory: dir.url, configuration: configuration) { app in
            let cache = try #require(app.caches.kvcache)
            var largest = 0
            for index in 0..<2_000 {
                try await app.cache.set("key-\(index)", to: index)
                largest = max(largest, cache.memory.count)
            }
            #expect(largest <= 32)
            #expect(cache.memory.count <= 32)
            #expect(try cache.disk.totalCount == 2_000)
            for index in stride(from: 0, to: 2_000, by: 97) {
                #expect(try await app.cache.get("key-\(index)", as: Int.self) == index)
            }
            #expect(cache.memory.count <= 32)
        }
    }
}
#endif
