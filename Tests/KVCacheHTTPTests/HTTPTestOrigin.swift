#if HTTP
import Foundation
import HTTPTypes
import KVCache
@testable import KVCacheHTTP
import Synchronization

/// An origin the cache sends to: it answers each request with the response a test scripts
/// (a function of the request and how many it has seen), and records what it received.
final class HTTPTestOrigin: Sendable {
    typealias Handler = @Sendable (HTTPRequest, Int) throws -> (HTTPResponse, Data)

    private let handler: Handler
    private let received = Mutex<[HTTPRequest]>([])

    init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    /// Every response is `status` with `fields` and `body`.
    convenience init(status: HTTPResponse.Status = .ok, fields: HTTPFields, body: String = "body") {
        self.init { _, _ in (HTTPResponse(status: status, headerFields: fields), Data(body.utf8)) }
    }

    var requests: [HTTPRequest] { received.withLock { $0 } }
    var count: Int { received.withLock { $0.count } }

    var transport: HTTPCache.Transport {
        { [self] request, _ in
            let number = received.withLock { list -> Int in
                list.append(request)
                return list.count
            }
            return try handler(request, number)
        }
    }
}

/// A clock the test moves by hand, in seconds since 1970.
final class HTTPTestClock: Sendable {
    private let seconds = Mutex<Double>(1_800_000_000)

    var now: Double { seconds.withLock { $0 } }

    func advance(_ interval: Double) {
        seconds.withLock { $0 += interval }
    }
}

/// An HTTPCache over a two-level cache in a new temporary directory, with a manual clock.
struct HTTPCacheFixture {
    let directory: URL
    let storage: Cache<HTTPCacheRecord>
    let cache: HTTPCache
    let clock = HTTPTestClock()

    init(mode: HTTPCache.Mode = .shared, configure: (inout HTTPCache.Configuration) -> Void = { _ in }) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kvcache-http-\(UUID().uuidString)", isDirectory: true)
        storage = try Cache(directory: directory, coder: HTTPCacheRecordCoder())
        var configuration = HTTPCache.Configuration(mode: mode)
        configure(&configuration)
        let clock = clock
        cache = try HTTPCache(storage: storage, configuration: configuration, clock: { clock.now })
    }

    /// The origin's Date for "now" on the test clock.
    var date: String { HTTPDate.format(clock.now) }

    func get(_ path: String, _ fields: HTTPFields = [:], method: HTTPRequest.Method = .get,
             from origin: HTTPTestOrigin) async throws -> HTTPCacheResponse {
        try await cache.response(for: Self.request(path, fields, method: method), transport: origin.transport)
    }

    static func request(_ path: String, _ fields: HTTPFields = [:], method: HTTPRequest.Method = .get) -> HTTPRequest {
        HTTPRequest(method: method, scheme: "https", authority: "origin.example", path: path, headerFields: fields)
    }

    func remove() {
        try? storage.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

extension HTTPField.Name {
    static let testVariant = HTTPField.Name("X-Variant")!
}

extension HTTPCacheResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
}
#endif
