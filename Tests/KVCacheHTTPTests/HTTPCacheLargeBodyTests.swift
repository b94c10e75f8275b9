#if HTTP
import Foundation
import HTTPTypes
import KVCache
@testable import KVCacheHTTP
import Synchronization
import Testing

/// Bodies over the large-body threshold: kept in disk values of their own, streamed in and out.
@Suite struct HTTPCacheLargeBodyTests {
    static func body(_ count: Int, seed: UInt8 = 1) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    /// An origin whose body arrives in chunks of `chunk` bytes, without a Content-Length.
    final class StreamingOrigin: Sendable {
        let fields: HTTPFields
        let body: Data
        let chunk: Int
        private let received = Mutex<[HTTPRequest]>([])

        init(fields: HTTPFields = [.cacheControl: "max-age=100"], body: Data, chunk: Int = 10_000) {
            self.fields = fields
            self.body = body
            self.chunk = chunk
        }

        var count: Int { received.withLock { $0.count } }
        var requests: [HTTPRequest] { received.withLock { $0 } }

        var transport: HTTPCache.StreamingTransport {
            { [self] request, _ in
                received.withLock { $0.append(request) }
                let (body, chunk) = (body, chunk)
                let stream = AsyncStream<Data> { continuation in
                    for start in stride(from: 0, to: body.count, by: chunk) {
                        continuation.yield(body[start..<min(start + chunk, body.count)])
                    }
                    continuation.finish()
                }
                return (HTTPResponse(status: .ok, headerFields: fields), HTTPCacheBody(stream))
            }
        }
    }

    static func fixture(threshold: Int = 1_000, maximumBodySize: Int = 64 << 20) throws -> HTTPCacheFixture {
        try HTTPCacheFixture {
            $0.largeBodyThreshold = threshold
            $0.maximumBodySize = maximumBodySize
        }
    }

    func bodyKeys(_ fixture: HTTPCacheFixture) throws -> [String] {
        try fixture.storage.disk.flush()
        return try fixture.storage.disk.keys(withPrefix: "http-body:", limit: 100)
    }

    func get(_ path: String, _ fields: HTTPFields = [:], in fixture: HTTPCacheFixture,
             from origin: StreamingOrigin) async throws -> HTTPCacheStreamingResponse {
        try await fixture.cache.streamingResponse(for: HTTPCacheFixture.request(path, fields), transport: origin.transport)
    }

    @Test func aLargeBodyIsKeptOutOfItsRecordAndServedWhole() async throws {
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        let body = Self.body(100_000)
        let origin = HTTPTestOrigin { _, _ in (HTTPResponse(status: .ok, headerFields: [.cacheControl: "max-age=100"]), body) }
        #expect(try await fixture.get("/a", from: origin).outcome == .miss)
        let hit = try await fixture.get("/a", from: origin)
        #expect(hit.outcome == .hit)
        #expect(hit.body == body)
        let key = try #require(fixture.cache.key(for: HTTPCacheFixture.request("/a")))
        #expect(try #require(try await fixture.storage.value(forKey: key)).byteCount < 1_000)
        #expect(try bodyKeys(fixture).count == 1)
        #expect(origin.count == 1)
    }

    @Test func aStreamedMissIsStoredOnceReadToItsEndAndThenServedFromItsFile() async throws {
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        let body = Self.body(300_000)
        let origin = StreamingOrigin(body: body)
        let miss = try await get("/a", in: fixture, from: origin)
        #expect(miss.outcome == .miss)
        #expect(miss.body.knownCount == nil)
        var chunks = 0
        var received = Data()
        for try await chunk in miss.body {
            chunks += 1
            received.append(chunk)
        }
        #expect(chunks == 30)
        #expect(received == body)

        let hit = try await get("/a", in: fixture, from: origin)
        #expect(hit.outcome == .hit)
        #expect(hit.body.knownCount == 300_000)
        #expect(try await hit.body.collect() == body)
        #expect(origin.count == 1)
        // The Data API reads the same stored body whole.
        let whole = try await fixture.cache.response(for: HTTPCacheFixture.request("/a")) { _, _ in
            Issue.record("the origin was asked")
            return (HTTPResponse(status: .ok), Data())
        }
        #expect(whole.outcome == .hit)
        #expect(whole.body == body)
    }

    @Test func aSmallStreamedBodyIsStoredInItsRecord() async throws {
        let fixture = try Self.fixture(threshold: 1 << 20)
        defer { fixture.remove() }
        let origin = StreamingOrigin(body: Self.body(25_000))
        _ = try await get("/a", in: fixture, from: origin).body.collect()
        let hit = try await get("/a", in: fixture, from: origin)
        #expect(hit.outcome == .hit)
        #expect(try await hit.body.collect() == Self.body(25_000))
        #expect(try bodyKeys(fixture).isEmpty)
    }

    @Test func aMissNotReadToItsEndIsNotStoredAndLeavesNothing() async throws {
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        let origin = StreamingOrigin(body: Self.body(300_000))
        do {
            let miss = try await get("/a", in: fixture, from: origin)
            var iterator = miss.body.makeAsyncIterator()
            for _ in 0..<5 { _ = try await iterator.next() }
        }
        #expect(try bodyKeys(fixture).isEmpty)
        let dataFolder = fixture.directory.appendingPathComponent("data").path
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: dataFolder)) ?? []).isEmpty)
        #expect(try await get("/a", in: fixture, from: origin).outcome == .miss)
        #expect(origin.count == 2)
    }

    @Test func aStreamedBodyOverTheLimitPassesThroughWhole() async throws {
        let fixture = try Self.fixture(maximumBodySize: 50_000)
        defer { fixture.remove() }
        let body = Self.body(100_000)
        let origin = StreamingOrigin(body: body)
        #expect(try await get("/a", in: fixture, from: origin).body.collect() == body)
        #expect(try await get("/a", in: fixture, from: origin).outcome == .miss)
        #expect(try bodyKeys(fixture).isEmpty)
        // A declared length over the limit is not even recorded.
        var fields = origin.fields
        fields[.contentLength] = "100000"
        let declared = StreamingOrigin(fields: fields, body: body)
        #expect(try await get("/b", in: fixture, from: declared).body.collect() == body)
        #expect(try await get("/b", in: fixture, from: declared).outcome == .miss)
    }

    @Test func aRangeOfALargeStoredBodyIsReadFromItsFile() async throws {
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        let body = Self.body(300_000)
        let origin = StreamingOrigin(body: body)
        _ = try await get("/a", in: fixture, from: origin).body.collect()
        let partial = try await get("/a", [.range: "bytes=299000-"], in: fixture, from: origin)
        #expect(partial.response.status == .partialContent)
        #expect(partial.response.headerFields[.contentRange] == "bytes 299000-299999/300000")
        #expect(try await partial.body.collect() == body[299_000...])
        let unsatisfiable = try await get("/a", [.range: "bytes=400000-"], in: fixture, from: origin)
        #expect(unsatisfiable.response.status == .rangeNotSatisfiable)
        #expect(origin.count == 1)
    }

    @Test func aResponseWhoseBodyValueIsGoneCountsAsNotStored() async throws {
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        let origin = StreamingOrigin(body: Self.body(300_000))
        _ = try await get("/a", in: fixture, from: origin).body.collect()
        let bodyKey = try #require(try bodyKeys(fixture).first)
        try await fixture.storage.disk.removeValue(forKey: bodyKey)
        let again = try await get("/a", in: fixture, from: origin)
        #expect(again.outcome == .miss)
        #expect(try await again.body.collect() == Self.body(300_000))
        #expect(try await get("/a", in: fixture, from: origin).outcome == .hit)
        #expect(origin.count == 2)
    }

    @Test func aReplacedOrInvalidatedResponseTakesItsBodyValueAlong() async throws {
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        let origin = StreamingOrigin(body: Self.body(300_000))
        _ = try await get("/a", in: fixture, from: origin).body.collect()
        let first = try bodyKeys(fixture)
        _ = try await get("/a", [.cacheControl: "no-cache"], in: fixture, from: origin).body.collect()
        let second = try bodyKeys(fixture)
        #expect(second.count == 1)
        #expect(second != first)
        let post = HTTPCacheFixture.request("/a", method: .post)
        _ = try await fixture.cache.streamingResponse(for: post) { _, _ in (HTTPResponse(status: .ok), .empty) }
        #expect(try bodyKeys(fixture).isEmpty)
        #expect(try await get("/a", in: fixture, from: origin).outcome == .miss)
    }

    @Test func aRevalidatedLargeBodyIsServedFromItsFile() async throws {
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        let body = Self.body(300_000)
        let origin = StreamingOrigin(fields: [.cacheControl: "max-age=10", .eTag: "\"v1\""], body: body)
        _ = try await get("/a", in: fixture, from: origin).body.collect()
        fixture.clock.advance(20)
        let revalidated = try await fixture.cache.streamingResponse(for: HTTPCacheFixture.request("/a")) { request, _ in
            #expect(request.headerFields[.ifNoneMatch] == "\"v1\"")
            return (HTTPResponse(status: .notModified, headerFields: [.cacheControl: "max-age=10", .eTag: "\"v1\""]), .empty)
        }
        #expect(revalidated.outcome == .revalidated)
        #expect(try await revalidated.body.collect() == body)
        #expect(try bodyKeys(fixture).count == 1)
    }

    @Test func aHeadRequestGetsNoBody() async throws {
        let fixture = try Self.fixture()
        defer { fixture.remove() }
        let origin = StreamingOrigin(body: Self.body(300_000))
        _ = try await get("/a", in: fixture, from: origin).body.collect()
        let head = try await fixture.cache.streamingResponse(for: HTTPCacheFixture.request("/a", method: .head),
                                                             transport: origin.transport)
        #expect(head.outcome == .hit)
        #expect(try await head.body.collect().isEmpty)
    }

    @Test func aRecordOfTheEarlierFormatIsStillRead() throws {
        // Version 2: every body in the record.
        var bytes = Data("KVHTTP".utf8) + [2]
        func integer<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        func string(_ value: String) { integer(UInt32(value.utf8.count)); bytes.append(contentsOf: Array(value.utf8)) }
        integer(UInt32(1))
        integer(UInt32(200)); string("OK")
        for _ in 0..<3 { integer((1_800_000_000.0).bitPattern) }
        integer(UInt32(0))
        integer(UInt32(1)); string("Cache-Control"); string("max-age=100")
        integer(UInt64(4)); bytes.append(contentsOf: Array("body".utf8))
        let record = try #require(HTTPCacheRecord(decoding: bytes))
        #expect(record.variants.first?.body == .bytes(Data("body".utf8)))
        // And a record written now reads back the same.
        let decoded = try #require(HTTPCacheRecord(decoding: record.encoded()))
        #expect(decoded.variants.first?.body == .bytes(Data("body".utf8)))
        let file = HTTPCacheRecord(variants: [StoredResponse(status: 200, reasonPhrase: "OK", fields: [], requestTime: 0,
                                                             responseTime: 0, date: 0, varyValues: [],
                                                             body: .file(key: "http-body:x", count: 7))])
        #expect(HTTPCacheRecord(decoding: file.encoded())?.variants.first?.body == .file(key: "http-body:x", count: 7))
    }

    @Test func aBodyInChunksCollectsWithinItsLimitAndKnowsOnlyADeclaredCount() async throws {
        let chunks = AsyncStream<Data> { continuation in
            for piece in ["ab", "cd", "e"] { continuation.yield(Data(piece.utf8)) }
            continuation.finish()
        }
        #expect(HTTPCacheBody(chunks).knownCount == nil)
        #expect(HTTPCacheBody(chunks, count: -1).knownCount == nil)
        #expect(HTTPCacheBody(chunks, count: 5).knownCount == 5)
        #expect(try await HTTPCacheBody(chunks).collect(upTo: 5) == Data("abcde".utf8))
        let again = AsyncStream<Data> { continuation in
            for piece in ["ab", "cd", "e"] { continuation.yield(Data(piece.utf8)) }
            continuation.finish()
        }
        await #expect(throws: KVCacheError.self) { try await HTTPCacheBody(again).collect(upTo: 4) }
        await #expect(throws: KVCacheError.self) { try await HTTPCacheBody(Data("abcde".utf8)).collect(upTo: 4) }
        #expect(try await HTTPCacheBody.empty.collect().isEmpty)
    }
}
#endif
