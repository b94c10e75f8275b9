import Foundation
import Testing
@testable import KVCache

/// A look-up by a key's UTF-8 bytes finds what the key stored, under every policy and on
/// every read path (the read lanes, and the cache's lock once entries can expire).
@Suite struct MemoryCacheKeyBytesTests {
    static let keys = ["", "a", "fifteen-bytes.."] + [16, 17, 31, 32, 33, 100, 300].map { String(repeating: "k", count: $0) }
        + ["http:https://example.com/items?page=2", "clé-é", "e\u{301}", "日本語のキー", "🙂🙃"]

    @Test(arguments: [EvictionPolicy.adaptive, .lru], [false, true])
    func aLookUpByBytesFindsWhatTheKeyStored(policy: EvictionPolicy, expiring: Bool) throws {
        let clock = ManualClock()
        let cache: MemoryCache<ByteWiseKey, Int> = try makeCache(.init(autoTrimInterval: nil, policy: policy), clock: clock)
        for (index, key) in Self.keys.enumerated() {
            cache.setValue(index, forKey: ByteWiseKey(key), expiration: expiring ? .after(.seconds(10)) : .never)
        }
        for (index, key) in Self.keys.enumerated() {
            var copy = key
            #expect(copy.withUTF8 { cache.value(forKeyBytes: UnsafeRawBufferPointer($0)) } == index, "\(key)")
        }
        #expect(cache.statistics.hits == Self.keys.count)
        // Other bytes: a longer or shorter key, another spelling, bytes that are not UTF-8.
        for bytes in [Array("a ".utf8), Array("fifteen-bytes.".utf8), Array("\u{e9}".utf8), [0xFF, 0xFE], [0x63, 0x6C, 0xC3]] {
            #expect(bytes.withUnsafeBytes { cache.value(forKeyBytes: $0) } == nil)
        }
        #expect(cache.statistics.misses >= 3)
        if expiring {
            clock.advance(by: 10)
            #expect(Array("a".utf8).withUnsafeBytes { cache.value(forKeyBytes: $0) } == nil)
        }
    }

    @Test func theCachesMemoryLevelFindsByBytes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-bytes-\(UUID().uuidString)")
        let cache = try Cache<Data>(directory: directory)
        defer {
            try? cache.close()
            try? FileManager.default.removeItem(at: directory)
        }
        try await cache.setValue(Data([1, 2, 3]), forKey: "http:https://example.com/a")
        #expect(Array("http:https://example.com/a".utf8).withUnsafeBytes { cache.memory.value(forKeyBytes: $0) } == Data([1, 2, 3]))
        #expect(Array("http:https://example.com/b".utf8).withUnsafeBytes { cache.memory.value(forKeyBytes: $0) } == nil)
    }
}
