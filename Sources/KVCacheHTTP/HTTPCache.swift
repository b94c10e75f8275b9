#if HTTP
import Foundation
import HTTPTypes
import KVCache

/// An HTTP cache (RFC 9111) over a ``Cache`` of records: it answers requests from stored
/// responses while they are fresh, revalidates stale ones with conditional requests, and
/// stores what the origin sends when the rules allow.
///
/// Give it a transport (the function that sends a request to the origin) per call:
/// ```swift
/// let http = try HTTPCache(directory: dir)
/// let answer = try await http.response(for: request) { request, body in
///     try await client.send(request, body)   // (HTTPResponse, Data)
/// }
/// ```
///
/// The cache key is the whole URL: scheme, authority and path with its query. A private
/// cache (a browser's, one client's) may store responses marked `private`; a shared cache
/// (a proxy's, a service's) honours `s-maxage`, `proxy-revalidate`, `private` and requests
/// with `Authorization`.
public final class HTTPCache: Sendable {
    /// Whose cache this is, which decides what it may store and for how long.
    public enum Mode: Sendable, Hashable {
        /// One client's cache, like a browser's.
        case `private`
        /// A cache that serves many clients: a proxy, a CDN node, a service.
        case shared
    }

    /// Freshness for responses that give none (RFC 9111 §4.2.2): a fraction of the time
    /// since `Last-Modified`, at most `maximum`.
    public struct Heuristic: Sendable, Hashable {
        /// The share of the time since `Last-Modified` a response stays fresh (0...1).
        public var fraction: Double
        /// The longest heuristic lifetime.
        public var maximum: Duration

        /// 10 % of the time since the last modification, at most a day; a fraction of 0 turns
        /// heuristic freshness off.
        public init(fraction: Double = 0.1, maximum: Duration = .seconds(86_400)) {
            self.fraction = fraction
            self.maximum = maximum
        }
    }

    /// What the cache may store, and its limits.
    public struct Configuration: Sendable {
        /// Private (one client's) or shared (many clients').
        public var mode: Mode
        /// Freshness for responses that give none.
        public var heuristic: Heuristic
        /// Responses with a larger body are passed through and not stored.
        public var maximumBodySize: Int
        /// Stored responses to one URL that differ by `Vary`; the oldest goes first.
        public var maximumVariants: Int
        /// Whether a stale response is served when the transport throws (the origin cannot
        /// be reached), unless the response forbids it (`must-revalidate`, `no-cache`, and in
        /// a shared cache `proxy-revalidate` and `s-maxage`). RFC 9111 §4.2.4 allows it.
        public var servesStaleWhenUnreachable: Bool
        /// Bodies larger than this are kept in the disk level as values of their own, written
        /// and served in pieces, and never enter the memory level; smaller ones are kept in
        /// their response's record, at every level.
        public var largeBodyThreshold: Int
        /// How long a GET for a URL that another request is already fetching (nothing usable
        /// stored) waits for that answer to be stored before it asks the origin itself; zero
        /// sends every miss to the origin.
        public var maximumMissWait: Duration

        /// A private cache with 10 % heuristic freshness, bodies up to 64 MiB (over 1 MiB on
        /// disk only), 8 variants per URL, stale answers while the origin is unreachable, and
        /// concurrent misses of a URL waiting up to 5 s for the first one's answer.
        public init(mode: Mode = .private, heuristic: Heuristic = .init(),
                    maximumBodySize: Int = 64 << 20, maximumVariants: Int = 8,
                    servesStaleWhenUnreachable: Bool = true, largeBodyThreshold: Int = 1 << 20,
                    maximumMissWait: Duration = .seconds(5)) {
            self.mode = mode
            self.heuristic = heuristic
            self.maximumBodySize = maximumBodySize
            self.maximumVariants = maximumVariants
            self.servesStaleWhenUnreachable = servesStaleWhenUnreachable
            self.largeBodyThreshold = largeBodyThreshold
            self.maximumMissWait = maximumMissWait
        }
    }

    /// Sends a request (with its body, if any) to the origin and returns its answer.
    public typealias Transport = @Sendable (HTTPRequest, Data?) async throws -> (HTTPResponse, Data)

    /// Sends a request (with its body, if any) to the origin and returns its answer, whose
    /// body may arrive in pieces.
    public typealias StreamingTransport = @Sendable (HTTPRequest, Data?) async throws -> (HTTPResponse, HTTPCacheBody)

    /// Where responses are kept: every level of the cache (memory, disk, remote) serves. Its
    /// memory level holds records ready to serve; large bodies are disk-level values of
    /// their own.
    public let storage: Cache<HTTPCacheRecord>
    /// The configuration given at init.
    public let configuration: Configuration
    /// Seconds since 1970; tests move it by hand.
    let clock: @Sendable () -> Double
    let revalidations = BackgroundRevalidations()
    let missLocks: MissLocks
    /// The disk level's key limit, read once here rather than through `storage` on every
    /// request.
    let maxKeyLength: Int

    /// A cache that keeps its responses in `storage`, a cache opened with an
    /// ``HTTPCacheRecordCoder``; it may have a remote level, and other processes may share
    /// its directory.
    ///
    /// - Throws: `KVCacheError.invalidArgument` for a heuristic fraction outside 0...1, a
    ///   negative heuristic maximum, a limit below 1, or a negative large-body threshold or
    ///   miss wait.
    public convenience init(storage: Cache<HTTPCacheRecord>, configuration: Configuration = .init()) throws {
        try self.init(storage: storage, configuration: configuration, clock: HTTPCache.systemClock)
    }

    /// A cache that keeps its responses in a ``Cache`` of its own, opened in `directory` with
    /// `storageConfiguration` (its limits, its remote level); ``close()`` closes it.
    ///
    /// - Throws: as ``init(storage:configuration:)``, and the errors of opening the storage.
    public convenience init(directory: URL, configuration: Configuration = .init(),
                            storageConfiguration: Cache<HTTPCacheRecord>.Configuration = .init()) throws {
        let storage = try Cache(directory: directory, coder: HTTPCacheRecordCoder(), configuration: storageConfiguration)
        do {
            try self.init(storage: storage, configuration: configuration, clock: HTTPCache.systemClock)
        } catch {
            try? storage.close()
            throw error
        }
    }

    /// Closes ``storage``: its pending writes reach the disk, and later calls fail.
    public func close() throws {
        try storage.close()
    }

    /// Seconds since 1970, from the system's real-time clock. The coarse clock (a few
    /// milliseconds' resolution) is read without a system call or a time-stamp counter read,
    /// at a fraction of the cost; ages and lifetimes are whole seconds.
    static let systemClock: @Sendable () -> Double = {
        var spec = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_REALTIME_COARSE, &spec)
        #else
        clock_gettime(CLOCK_REALTIME, &spec)
        #endif
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1_000_000_000
    }

    init(storage: Cache<HTTPCacheRecord>, configuration: Configuration, clock: @escaping @Sendable () -> Double,
         missLocks: MissLocks = MissLocks()) throws {
        let heuristic = configuration.heuristic
        guard heuristic.fraction.isFinite, (0...1).contains(heuristic.fraction), heuristic.maximum >= .zero else {
            throw KVCacheError(code: .invalidArgument, message: "heuristic.fraction must be within 0...1 and heuristic.maximum at least zero")
        }
        guard configuration.maximumBodySize >= 1, configuration.maximumVariants >= 1 else {
            throw KVCacheError(code: .invalidArgument, message: "maximumBodySize and maximumVariants must be at least 1")
        }
        guard configuration.largeBodyThreshold >= 0, configuration.maximumMissWait >= .zero else {
            throw KVCacheError(code: .invalidArgument, message: "largeBodyThreshold and maximumMissWait must be at least 0")
        }
        self.storage = storage
        self.configuration = configuration
        self.clock = clock
        self.missLocks = missLocks
        maxKeyLength = storage.disk.configuration.maxKeyLength
    }

    /// The status codes a response may be stored with and given heuristic freshness
    /// (RFC 9110 §15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Status codes this cache understands (for `must-understand`).
    static let understood: Set<Int> = [200, 203, 204, 300, 301, 302, 303, 307, 308, 404, 405, 410, 414, 501]

    /// Answers `request`: from a stored response when one may be used, otherwise through
    /// `transport`, storing what comes back when the rules allow. The body is read whole
    /// (use ``streamingResponse(for:body:transport:)`` for bodies too large for memory).
    ///
    /// - Throws: what `transport` throws, unless a stored response may be served instead
    ///   (`stale-if-error`), and what reading a stored body throws.
    public func response(for request: HTTPRequest, body: Data? = nil,
                         transport: @escaping Transport) async throws -> HTTPCacheResponse {
        // Here rather than a call further: each async call allocates its frame.
        if let hit = freshHit(for: request) { return hit }
        return try await generalResponse(for: request, body: body, revalidatesInBackground: true, transport: transport)
    }

    /// Answers `request` as ``response(for:body:transport:)`` does, with a body that is read
    /// in pieces: a large stored body comes from its file, and the origin's body is passed on
    /// as it arrives and stored on the way (once it has been read to its end).
    ///
    /// - Throws: what `transport` throws, unless a stored response may be served instead.
    public func streamingResponse(for request: HTTPRequest, body: Data? = nil,
                                  transport: @escaping StreamingTransport) async throws -> HTTPCacheStreamingResponse {
        try await streamingResponse(for: request, body: body, revalidatesInBackground: true, transport: transport)
    }

    /// ``response(for:body:transport:)`` past its fresh hit: the general path, with its body
    /// collected. Without background work, `transport` is not used after this returns: a stale
    /// response that `stale-while-revalidate` allows is revalidated before the answer instead.
    func generalResponse(for request: HTTPRequest, body: Data?, revalidatesInBackground: Bool,
                         transport: @escaping Transport) async throws -> HTTPCacheResponse {
        let answer = try await answer(request, body: body, revalidatesInBackground: revalidatesInBackground,
                                      transport: .bytes(transport))
        // A body in memory (every hit of a body kept in its record) is handed over as it is.
        let bytes: Data
        if case .bytes(let inMemory) = answer.body.source { bytes = inMemory } else { bytes = try await answer.body.collect() }
        return HTTPCacheResponse(response: answer.response, body: bytes, outcome: answer.outcome)
    }

    func streamingResponse(for request: HTTPRequest, body: Data?, revalidatesInBackground: Bool,
                           transport: @escaping StreamingTransport) async throws -> HTTPCacheStreamingResponse {
        if let hit = freshHit(for: request) {
            return HTTPCacheStreamingResponse(response: hit.response, body: HTTPCacheBody(hit.body), outcome: .hit)
        }
        return try await answer(request, body: body, revalidatesInBackground: revalidatesInBackground,
                                transport: .streaming(transport))
    }

    /// The general path: every method, every request, every level.
    func answer(_ request: HTTPRequest, body: Data?, revalidatesInBackground: Bool,
                transport: OriginTransport) async throws -> HTTPCacheStreamingResponse {
        guard let key = key(for: request) else {
            let (response, responseBody) = try await transport.send(request, body)
            return HTTPCacheStreamingResponse(response: response, body: responseBody, outcome: .passedThrough)
        }
        switch request.method {
        case .get, .head:
            return try await read(request, key: key, revalidatesInBackground: revalidatesInBackground, transport: transport)
        case .options, .trace:
            let (response, responseBody) = try await transport.send(request, body)
            return HTTPCacheStreamingResponse(response: response, body: responseBody, outcome: .passedThrough)
        default:
            let (response, responseBody) = try await transport.send(request, body)
            if (200..<400).contains(response.status.code) { await invalidate(after: request, key: key, response: response) }
            return HTTPCacheStreamingResponse(response: response, body: responseBody, outcome: .passedThrough)
        }
    }

    /// Waits until the revalidations started to serve stale responses
    /// (`stale-while-revalidate`) have finished.
    public func waitForBackgroundRevalidations() async {
        await revalidations.waitForAll()
    }

    /// The storage key of the request's URL, or nil when it has none or is too long to store.
    func key(for request: HTTPRequest) -> String? {
        guard let scheme = request.scheme, let authority = request.authority, let path = request.path else { return nil }
        let key = Self.key(scheme: scheme, authority: authority, path: path)
        return key.utf8.count <= maxKeyLength ? key : nil
    }

    static func key(scheme: String, authority: String, path: String) -> String {
        // ASCII lower-cased in the copy; a non-ASCII scheme or authority takes `lowercased()`
        // instead, so the keys are the same as ever.
        let key = String(unsafeUninitializedCapacity: keyLength(scheme, authority, path)) { buffer in
            writeKey(scheme, authority, path, to: buffer) ?? 0
        }
        return key.isEmpty ? "http:\(scheme.lowercased())://\(authority.lowercased())\(path)" : key
    }

    /// Calls `body` with the UTF-8 bytes of the request's key, built on the stack: what a hit
    /// looks up, with no `String` made. Nil when the request has no key that way (no scheme,
    /// authority or path; a non-ASCII scheme or authority; too long to store).
    func withKeyBytes<Result>(of request: HTTPRequest, _ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        guard let scheme = request.scheme, let authority = request.authority, let path = request.path else { return nil }
        let length = Self.keyLength(scheme, authority, path)
        guard length <= maxKeyLength, length <= 4_096 else { return nil }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { buffer in
            Self.writeKey(scheme, authority, path, to: buffer).map { body(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[..<$0]))) }
        }
    }

    private static func keyLength(_ scheme: String, _ authority: String, _ path: String) -> Int {
        8 + scheme.utf8.count + authority.utf8.count + path.utf8.count
    }

    /// Writes `http:<scheme>://<authority><path>`, scheme and authority lower-cased, to
    /// `buffer` (of `keyLength` bytes); nil when the scheme or authority is not ASCII.
    private static func writeKey(_ scheme: String, _ authority: String, _ path: String,
                                 to buffer: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        guard var next = buffer.baseAddress else { return nil }
        for byte in "http:".utf8 { next.initialize(to: byte); next += 1 }
        let schemeBits = copy(scheme, to: &next, lowerCasing: true)
        for byte in "://".utf8 { next.initialize(to: byte); next += 1 }
        guard schemeBits | copy(authority, to: &next, lowerCasing: true) < 0x80 else { return nil }
        _ = copy(path, to: &next, lowerCasing: false)
        return next - buffer.baseAddress!
    }

    /// Copies `part`'s UTF-8 bytes to `next` and moves it past them; returns the bytes or-ed
    /// together (under 0x80: ASCII). From the part's contiguous bytes where it has them (a
    /// small string's spilled to the stack): iterating a `String.UTF8View` costs several
    /// times more. (No state captured: a closure that changed a captured variable would pay
    /// a dynamic exclusivity check.)
    private static func copy(_ part: String, to next: inout UnsafeMutablePointer<UInt8>, lowerCasing: Bool) -> UInt8 {
        let destination = next
        let copied = part.utf8.withContiguousStorageIfAvailable { bytes -> (count: Int, bits: UInt8) in
            guard let start = bytes.baseAddress else { return (0, 0) }
            guard lowerCasing else {
                destination.initialize(from: start, count: bytes.count)
                return (bytes.count, 0)
            }
            return (bytes.count, copyLowerCased(start, to: destination, count: bytes.count))
        }
        if let copied {
            next += copied.count
            return copied.bits
        }
        var bits: UInt8 = 0
        for byte in part.utf8 {
            bits |= byte
            next.initialize(to: lowerCasing ? byte.asciiLowercased : byte)
            next += 1
        }
        return lowerCasing ? bits : 0
    }

    /// Copies `count` bytes, ASCII capitals lower-cased, eight at a time (the last eight
    /// overlap the ones before: lower-casing twice changes nothing); returns the bytes or-ed
    /// together, so that a caller can tell ASCII.
    static func copyLowerCased(_ source: UnsafePointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>, count: Int) -> UInt8 {
        guard count >= 8 else {
            var bits: UInt8 = 0
            for offset in 0..<count {
                bits |= source[offset]
                destination[offset] = source[offset].asciiLowercased
            }
            return bits
        }
        let (from, to) = (UnsafeRawPointer(source), UnsafeMutableRawPointer(destination))
        var bits: UInt64 = 0
        var offset = 0
        while true {
            let at = min(offset, count - 8)
            let word = from.loadUnaligned(fromByteOffset: at, as: UInt64.self)
            bits |= word
            to.storeBytes(of: asciiLowercased(word), toByteOffset: at, as: UInt64.self)
            if at == count - 8 { return bits & 0x8080_8080_8080_8080 == 0 ? 0 : 0x80 }
            offset += 8
        }
    }

    /// The eight bytes of `word` with each of `A`...`Z` lower-cased: each byte's low seven bits
    /// plus a bias set its high bit when they are at least `A`, and another when beyond `Z`;
    /// neither sum carries into the next byte. Bytes of 0x80 and above are left as they are.
    static func asciiLowercased(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let low = word & (0x7F &* ones)
        let atLeastA = low &+ ((0x80 - 0x41) &* ones)
        let beyondZ = low &+ ((0x80 - 0x5B) &* ones)
        let capitals = atLeastA & ~beyondZ & ~word & (0x80 &* ones)
        return word | capitals >> 2
    }

    var now: Double { clock() }
}

/// What ``HTTPCache/response(for:body:transport:)`` returns.
public struct HTTPCacheResponse: Sendable {
    /// The response to give the client, with `Age` when it comes from the cache.
    public var response: HTTPResponse
    /// Its body (empty for HEAD, a 304 or a 504).
    public var body: Data
    /// Where it came from.
    public var outcome: Outcome

    /// Where the response came from.
    public enum Outcome: Sendable, Hashable {
        /// A stored response, fresh.
        case hit
        /// A stored response, stale: allowed by the request (`max-stale`), or by the response
        /// while it is revalidated in the background (`stale-while-revalidate`) or while the
        /// origin fails (`stale-if-error`).
        case staleHit
        /// A stored response, confirmed by the origin with a 304.
        case revalidated
        /// The origin's response to a request the cache could not answer.
        case miss
        /// A request the cache does not answer (unsafe or uncacheable methods, ranges).
        case passedThrough
        /// `only-if-cached` with nothing stored that may be served: a 504.
        case unsatisfiable
    }

    /// A response, its body, and where it came from.
    public init(response: HTTPResponse, body: Data, outcome: Outcome) {
        self.response = response
        self.body = body
        self.outcome = outcome
    }
}

/// The origin as a call gave it: a transport of whole bodies or of streamed ones. (Kept as
/// given, so a call with a whole-body transport allocates no adapter.)
enum OriginTransport: Sendable {
    case bytes(HTTPCache.Transport)
    case streaming(HTTPCache.StreamingTransport)

    func send(_ request: HTTPRequest, _ body: Data?) async throws -> (HTTPResponse, HTTPCacheBody) {
        switch self {
        case .bytes(let transport):
            let (response, bytes) = try await transport(request, body)
            return (response, HTTPCacheBody(bytes))
        case .streaming(let transport):
            return try await transport(request, body)
        }
    }
}

/// What ``HTTPCache/streamingResponse(for:body:transport:)`` returns.
public struct HTTPCacheStreamingResponse: Sendable {
    /// The response to give the client, with `Age` when it comes from the cache.
    public var response: HTTPResponse
    /// Its body, to be read once (empty for HEAD, a 304 or a 504). A response from the origin
    /// is stored when its body has been read to the end.
    public var body: HTTPCacheBody
    /// Where it came from.
    public var outcome: HTTPCacheResponse.Outcome

    /// A response, its body, and where it came from.
    public init(response: HTTPResponse, body: HTTPCacheBody, outcome: HTTPCacheResponse.Outcome) {
        self.response = response
        self.body = body
        self.outcome = outcome
    }
}

extension UInt8 {
    /// An ASCII upper-case letter lower-cased; any other byte as it is.
    var asciiLowercased: UInt8 { self >= 0x41 && self <= 0x5A ? self | 0x20 : self }
}
#endif
