#if HTTP
import Foundation
import HTTPTypes
import KVCache
@testable import KVCacheHTTP
import Testing

/// Hostile and malformed messages: never a crash, never another URL's response, nothing
/// else in the cache lost.
@Suite struct HTTPCacheBadInputTests {
    @Test func malformedFreshnessFieldsMakeAResponseStaleNotFresh() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let cases: [HTTPFields] = [
            [.cacheControl: "max-age=-100"], [.cacheControl: "max-age=abc"], [.expires: "yesterday"],
            [.expires: "Sun, 06 Nov 1994 08:49:37 UTC"], [.cacheControl: "max-age=0", .age: "-5"],
            [.cacheControl: String(repeating: "max-age=1x,", count: 5000)],
        ]
        for (index, fields) in cases.enumerated() {
            let origin = HTTPTestOrigin(fields: fields)
            _ = try await fixture.get("/\(index)", from: origin)
            fixture.clock.advance(1)
            #expect(try await fixture.get("/\(index)", from: origin).outcome == .miss, "\(fields)")
        }
    }

    @Test func aNegativeOrHugeAgeNeverMakesAResponseFresher() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let negative = HTTPTestOrigin(fields: [.cacheControl: "max-age=10", .age: "-1000"])
        _ = try await fixture.get("/negative", from: negative)
        fixture.clock.advance(11)
        #expect(try await fixture.get("/negative", from: negative).outcome == .miss)
        let huge = HTTPTestOrigin(fields: [.cacheControl: "max-age=10", .age: "99999999999999999999999"])
        _ = try await fixture.get("/huge", from: huge)
        let answer = try await fixture.get("/huge", from: huge)
        #expect(answer.outcome == .miss)
    }

    @Test func repeatedAndHugeHeadersAreStoredAndServedIntact() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        var fields: HTTPFields = [.cacheControl: "max-age=100"]
        let big = String(repeating: "x", count: 100_000)
        for index in 0..<500 { fields.append(HTTPField(name: .init("X-Repeated")!, value: "\(index)")) }
        fields.append(HTTPField(name: .init("X-Big")!, value: big))
        let origin = HTTPTestOrigin(fields: fields)
        _ = try await fixture.get("/a", from: origin)
        let hit = try await fixture.get("/a", from: origin)
        #expect(hit.outcome == .hit)
        #expect(hit.response.headerFields[values: .init("X-Repeated")!].count == 500)
        #expect(hit.response.headerFields[.init("X-Big")!] == big)
    }

    @Test func aDamagedRecordIsAMissAndIsReplacedWithoutTouchingOtherKeys() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin { request, _ in
            (HTTPResponse(status: .ok, headerFields: [.cacheControl: "max-age=100"]), Data((request.path ?? "").utf8))
        }
        _ = try await fixture.get("/a", from: origin)
        _ = try await fixture.get("/b", from: origin)
        let key = try #require(fixture.cache.key(for: HTTPCacheFixture.request("/a")))
        let good = try #require(try await fixture.storage.disk.value(forKey: key))
        // The first response's request time (after the magic, version, count, status and "OK") made NaN.
        var notFinite = good
        withUnsafeBytes(of: Double.nan.bitPattern.littleEndian) { notFinite.replaceSubrange(21..<29, with: $0) }
        for damaged in [Data(), Data("not a record".utf8), good.prefix(good.count - 1), good + Data([0]),
                        Data(good.prefix(7)) + Data(repeating: 0xFF, count: 64), notFinite] {
            try await fixture.storage.disk.setValue(damaged, forKey: key)
            let answer = try await fixture.get("/a", from: origin)
            #expect(answer.outcome == .miss)
            #expect(answer.text == "/a")
            #expect(try await fixture.get("/a", from: origin).outcome == .hit)
        }
        #expect(try await fixture.get("/b", from: origin).text == "/b")
    }

    @Test func aURLTooLongToStoreIsPassedThroughAndNeverAnsweredFromTheCache() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100"])
        let long = "/" + String(repeating: "a", count: 100_000)
        #expect(try await fixture.get(long, from: origin).outcome == .passedThrough)
        #expect(try await fixture.get(long, from: origin).outcome == .passedThrough)
        #expect(origin.count == 2)
    }

    @Test func aBodyOverTheLimitIsServedButNotStored() async throws {
        let fixture = try HTTPCacheFixture { $0.maximumBodySize = 4 }
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100"], body: "12345")
        #expect(try await fixture.get("/a", from: origin).text == "12345")
        #expect(try await fixture.get("/a", from: origin).outcome == .miss)
    }

    @Test func aConfigurationOutOfRangeIsATypedError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-http-\(UUID().uuidString)")
        let storage = try Cache(directory: directory, coder: HTTPCacheRecordCoder())
        defer {
            try? storage.close()
            try? FileManager.default.removeItem(at: directory)
        }
        let invalid: [HTTPCache.Configuration] = [
            .init(heuristic: .init(fraction: -0.1)), .init(heuristic: .init(fraction: .nan)),
            .init(heuristic: .init(fraction: 2)), .init(heuristic: .init(maximum: .seconds(-1))),
            .init(maximumBodySize: 0), .init(maximumVariants: 0), .init(maximumVariants: -5),
        ]
        for configuration in invalid {
            #expect(throws: KVCacheError.self) { try HTTPCache(storage: storage, configuration: configuration) }
        }
        #expect(throws: Never.self) { try HTTPCache(storage: storage, configuration: .init(heuristic: .init(fraction: 0))) }
    }

    /// A cache that opens its own storage closes it when its configuration is refused, so the
    /// directory opens again at once; one that opens serves and closes.
    @Test func aCacheOpenedInADirectoryClosesItsStorageWhenRefused() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-http-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(throws: KVCacheError.self) { try HTTPCache(directory: directory, configuration: .init(maximumVariants: 0)) }
        let cache = try HTTPCache(directory: directory, configuration: .init(mode: .shared))
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100"], body: "kept")
        let request = HTTPCacheFixture.request("/a")
        #expect(try await cache.response(for: request, transport: origin.transport).outcome == .miss)
        #expect(try await cache.response(for: request, transport: origin.transport).outcome == .hit)
        try cache.close()
        await #expect(throws: KVCacheError.self) { try await cache.storage.setValue(HTTPCacheRecord(variants: []), forKey: "k") }

        let reopened = try HTTPCache(directory: directory, configuration: .init(mode: .shared))
        defer { try? reopened.close() }
        let answer = try await reopened.response(for: request, transport: origin.transport)
        #expect(answer.outcome == .hit && answer.body == Data("kept".utf8))
    }

    /// Bytes that are not a record are a typed decoding error, not a record.
    @Test func bytesThatAreNotARecordDoNotDecode() throws {
        let coder = HTTPCacheRecordCoder()
        for bytes in [Data(), Data("KVHTTP".utf8), Data("KVHTTP\u{9}".utf8), Data(repeating: 0xFF, count: 100)] {
            #expect(throws: KVCacheError.self) { try coder.decode(bytes) }
        }
        let record = HTTPCacheRecord(variants: [StoredResponse(
            status: 200, reasonPhrase: "OK", fields: [.init(name: "Cache-Control", value: "max-age=1")], requestTime: 1,
            responseTime: 2, date: 2, varyValues: [], body: .bytes(Data("body".utf8)))])
        let bytes = try coder.encode(record)
        #expect(record.byteCount == bytes.count)
        #expect(try coder.decode(bytes).variants.first?.body == .bytes(Data("body".utf8)))
    }
}
#endif
