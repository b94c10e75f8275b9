import Foundation
import Testing
@testable import KVCache

struct CacheCodingTests {
    @Test func codableValuesRoundTripThroughJSONOnDisk() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make(coder: JSONCoder<Profile>())
        let ada = Profile(name: "Ada", age: 36)

        try cache.setValue(ada, forKey: "ada")
        cache.memory.removeAll()

        #expect(try cache.result(forKey: "ada").source == .disk)
        #expect(try cache.value(forKey: "ada") == ada)
        #expect(try JSONDecoder().decode(Profile.self, from: cache.disk.value(forKey: "ada")!) == ada)
    }

    @Test func codableValuesRoundTripThroughPropertyLists() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make(coder: PropertyListCoder<[String: Int]>())

        try cache.setValue(["a": 1, "b": 2], forKey: "map")
        cache.memory.removeAll()

        #expect(try cache.value(forKey: "map") == ["a": 1, "b": 2])
    }

    @Test func codableCachesDefaultToJSON() throws {
        let base = TemporaryDirectory()
        defer { base.remove() }
        let cache = try Cache<Profile>(name: "profiles", baseDirectory: base.url)

        try cache.setValue(Profile(name: "Bo", age: 3), forKey: "bo")

        #expect(cache.coder is JSONCoder<Profile>)
        #expect(try cache.disk.value(forKey: "bo").map { String(decoding: $0, as: UTF8.self) }?.contains("\"Bo\"") == true)
    }

    @Test func theDefaultMemoryCostIsTheEncodedSize() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make(coder: JSONCoder<Profile>())
        let profile = Profile(name: "Ada", age: 36)
        let size = Int64(try JSONEncoder().encode(profile).count)

        try cache.setValue(profile, forKey: "set")
        try cache.setValue(profile, forKey: "memoryOnly", diskWrite: .skipped)
        try cache.disk.setValue(JSONEncoder().encode(profile), forKey: "promoted")
        _ = try cache.value(forKey: "promoted")

        #expect(cache.memory.totalCost == 3 * size)
    }

    @Test func aCostFunctionWeighsValuesInMemory() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make(coder: JSONCoder<Profile>()) { $0.cost = { Int64($0.age) } }

        try cache.setValue(Profile(name: "Ada", age: 36), forKey: "ada")
        try cache.disk.setValue(JSONEncoder().encode(Profile(name: "Bo", age: 3)), forKey: "bo")
        _ = try cache.value(forKey: "bo")

        #expect(cache.memory.totalCost == 39)
    }

    @Test func anUndecodableValueThrowsIsRemovedAndLeavesOthersAlone() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make(coder: JSONCoder<Profile>())
        try cache.setValue(Profile(name: "Ada", age: 36), forKey: "good")
        try cache.disk.setValue(Data("not json".utf8), forKey: "bad")

        #expect {
            try cache.value(forKey: "bad")
        } throws: { error in
            // The coder's own error comes along.
            guard let error = error as? KVCacheError, error.code == .decodingFailed else { return false }
            return error.key == "bad" && error.underlyingError is DecodingError
        }

        #expect(try !cache.disk.contains("bad"))
        #expect(try cache.value(forKey: "bad") == nil)
        #expect(try cache.value(forKey: "good") == Profile(name: "Ada", age: 36))
        #expect(cache.statistics.decodingFailures == 1)
    }

    @Test func anUndecodableValueCanBeKept() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make(coder: JSONCoder<Profile>()) { $0.removesUndecodableValues = false }
        try cache.disk.setValue(Data("not json".utf8), forKey: "bad")

        #expect(throws: KVCacheError.self) { try cache.value(forKey: "bad") }

        #expect(try cache.disk.value(forKey: "bad") == Data("not json".utf8))
        #expect(!cache.memory.contains("bad"))
    }

    @Test func theLoaderReplacesAnUndecodableValue() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make(coder: JSONCoder<Profile>())
        try await cache.disk.setValue(Data("not json".utf8), forKey: "p")

        let loaded = try await cache.value(forKey: "p") { Profile(name: "Fresh", age: 1) }

        #expect(loaded == Profile(name: "Fresh", age: 1))
        cache.memory.removeAll()
        #expect(try await cache.value(forKey: "p") == Profile(name: "Fresh", age: 1))
    }

    @Test func aValueThatCannotBeEncodedIsRejectedAndNothingIsStored() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make(coder: FailingCoder())

        #expect {
            try cache.setValue(1, forKey: "a")
        } throws: { error in
            guard let error = error as? KVCacheError, error.code == .encodingFailed else { return false }
            return error.underlyingError != nil
        }

        #expect(cache.memory.count == 0)
        #expect(try cache.disk.totalCount == 0)
    }
}
