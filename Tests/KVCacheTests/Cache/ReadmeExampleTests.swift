import Foundation
import Testing
import KVCache

/// The README's quick start, kept compiling and true.
@Suite struct ReadmeExampleTests {
    struct Profile: Codable, Sendable, Equatable { var name: String; var visits: Int }

    static func fetchProfile(id: Int) async throws -> Profile { Profile(name: "user \(id)", visits: 0) }

    @Test func quickStartWorksAsWritten() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let profiles = try synchronousPart(base: temporary.url)
        // In async code the same calls take `await`; loading is async only.
        let loaded = try await profiles.value(forKey: "user:2") {
            try await Self.fetchProfile(id: 2)
        }
        #expect(loaded.name == "user 2")
        #expect(try await profiles.value(forKey: "user:1")?.visits == 1)
    }

    func synchronousPart(base: URL) throws -> Cache<Profile> {
        var configuration = Cache<Profile>.Configuration()
        configuration.memory.countLimit = 10_000
        configuration.disk.sizeLimit = 512 << 20
        let profiles = try Cache<Profile>(name: "profiles", baseDirectory: base, configuration: configuration)

        try profiles.setValue(Profile(name: "ada", visits: 1), forKey: "user:1", expiration: .days(7))
        let profile = try profiles.value(forKey: "user:1")
        #expect(profile == Profile(name: "ada", visits: 1))

        let blobs = try Cache<Data>(name: "blobs", baseDirectory: base)
        try blobs.setValue(Data(count: 100_000), forKey: "thumb/42")
        #expect(blobs.disk.statistics.fileCount == 1)

        let lru = MemoryCache<String, Data>(configuration: .init(countLimit: 1_000, costLimit: 64 << 20))
        lru.setValue(Data([1, 2, 3]), forKey: "k", cost: 3)
        #expect(lru.totalCost == 3)

        let disk = try DiskCache(directory: base.appendingPathComponent("raw"))
        try disk.setValue(Data("hello".utf8), forKey: "greeting")
        try disk.flush()
        #expect(try disk.value(forKey: "greeting") == Data("hello".utf8))
        disk.close()
        return profiles
    }
}
