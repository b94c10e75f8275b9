#if HTTP
import Foundation
import HTTPTypes
import KVCache

/// GET and HEAD: serve a stored response, revalidate it, or fetch and store (RFC 9111 §4).
extension HTTPCache {
    /// `coalescesMisses`: whether a miss may wait for another request's answer to the URL
    /// (not again after such a wait).
    func read(_ request: HTTPRequest, key: String, revalidatesInBackground: Bool, coalescesMisses: Bool = true,
              transport: OriginTransport) async throws -> HTTPCacheStreamingResponse {
        let directives = RequestDirectives(request)
        let record = await load(key)
        // A single byte range is served from a stored complete response; anything else about
        // ranges goes to the origin, and partial responses are not stored.
        if let rangeValue = request.headerFields[.range] {
            if request.method == .get, request.headerFields[.ifRange] == nil, let range = ByteRange.parse(rangeValue),
               let record, let index = record.selectIndex(for: request), record[index].status == 200,
               let body = openBody(of: record[index]) {
                let stored = record[index]
                let freshness = Freshness(of: stored, mode: configuration.mode, heuristic: configuration.heuristic, now: now)
                if directives.accepts(stored, freshness, mode: configuration.mode) {
                    return serve(stored, body: body, range: range, age: freshness.age,
                                 outcome: freshness.isFresh ? .hit : .staleHit)
                }
            }
            let (response, body) = try await transport.send(request, nil)
            return HTTPCacheStreamingResponse(response: response, body: body, outcome: .passedThrough)
        }
        // A stored response whose body value is gone (evicted on its own) is as good as none.
        if let record, let index = record.selectIndex(for: request), let body = openBody(of: record[index]) {
            let stored = record[index]
            let freshness = Freshness(of: stored, mode: configuration.mode, heuristic: configuration.heuristic, now: now)
            if directives.accepts(stored, freshness, mode: configuration.mode) {
                return serve(stored, body: body, age: freshness.age, to: request, outcome: freshness.isFresh ? .hit : .staleHit)
            }
            if revalidatesInBackground, !directives.noCache, !freshness.isFresh, !freshness.requiresValidation,
               freshness.mayServeStale(mode: configuration.mode),
               let window = freshness.cacheControl.seconds("stale-while-revalidate")?.value,
               freshness.staleness <= Double(window) {
                revalidateInBackground(request, key: key, transport: transport)
                return serve(stored, body: body, age: freshness.age, to: request, outcome: .staleHit)
            }
            if directives.onlyIfCached { return Self.unsatisfiable() }
            return try await validate(request, key: key, record: record, index: index, body: body, freshness: freshness,
                                      directives: directives, transport: transport)
        }
        if directives.onlyIfCached { return Self.unsatisfiable() }
        // Nothing usable is stored: the first plain GET of a burst asks the origin, the others
        // wait for its answer to be stored and look again.
        if coalescesMisses, request.method == .get, configuration.maximumMissWait > .zero, request.isUnconditional {
            if let lock = missLocks.tryLock(key) {
                return try await fetch(request, key: key, record: record, transport: transport, lock: lock)
            }
            await missLocks.wait(for: key, timeout: configuration.maximumMissWait)
            return try await read(request, key: key, revalidatesInBackground: revalidatesInBackground,
                                  coalescesMisses: false, transport: transport)
        }
        return try await fetch(request, key: key, record: record, transport: transport)
    }

    /// The stored response's body, ready to serve; nil when it is kept in a value of its own
    /// that is gone or has another size.
    func openBody(of stored: StoredResponse) -> OpenedBody? {
        switch stored.body {
        case .bytes(let bytes):
            return .bytes(bytes)
        case .file(let key, let count):
            guard let reader = try? storage.disk.valueReader(forKey: key), reader.count == count else { return nil }
            return .reader(reader)
        }
    }

    /// Asks the origin whether the stored response may still be used (§4.3.1).
    func validate(_ request: HTTPRequest, key: String, record: HTTPCacheRecord, index: Int, body storedBody: OpenedBody,
                  freshness: Freshness, directives: RequestDirectives,
                  transport: OriginTransport) async throws -> HTTPCacheStreamingResponse {
        let stored = record[index]
        var conditional = request
        let etag = stored.values("etag").first
        let lastModified = stored.values("last-modified").first
        if etag != nil || lastModified != nil {
            conditional = request.withoutConditionals
            if let etag { conditional.headerFields[.ifNoneMatch] = etag }
            if let lastModified { conditional.headerFields[.ifModifiedSince] = lastModified }
        }
        let requestTime = now
        let response: HTTPResponse
        let body: HTTPCacheBody
        do {
            (response, body) = try await transport.send(conditional, nil)
        } catch {
            if directives.allowsStaleIfError(freshness, mode: configuration.mode)
                || (configuration.servesStaleWhenUnreachable && freshness.mayServeStale(mode: configuration.mode)) {
                return serve(stored, body: storedBody, age: freshness.age, to: request, outcome: .staleHit)
            }
            throw error
        }
        let responseTime = now
        if response.status.code == 304 {
            // A 304 whose strong validator differs is about another representation (§4.3.4).
            if let newTag = response.headerFields[.eTag], let etag, !newTag.hasPrefix("W/"), newTag != etag {
                return try await fetch(request.withoutConditionals, key: key, record: record, transport: transport)
            }
            // Without a Date of its own, the 304 would leave the stored Date, and the
            // freshened response would look as old as the first one.
            let updated = stored.updated(with: response.dated(responseTime), requestTime: requestTime,
                                         responseTime: responseTime)
            var record = record
            record[index] = updated
            await save(record, forKey: key)
            let age = Freshness.age(of: updated, now: now)
            return serve(updated, body: storedBody, age: age, to: request, outcome: .revalidated)
        }
        if response.status.code >= 500, directives.allowsStaleIfError(freshness, mode: configuration.mode) {
            return serve(stored, body: storedBody, age: freshness.age, to: request, outcome: .staleHit)
        }
        return await finish(request, response: response, body: body, key: key, record: record,
                            requestTime: requestTime, responseTime: responseTime)
    }

    /// Sends the request as it is and stores the answer when allowed; `lock`, the URL's miss
    /// lock if this request holds it, is released once the answer is stored or will not be.
    func fetch(_ request: HTTPRequest, key: String, record: HTTPCacheRecord?,
               transport: OriginTransport, lock: MissLock? = nil) async throws -> HTTPCacheStreamingResponse {
        let requestTime = now
        let response: HTTPResponse, body: HTTPCacheBody
        do {
            (response, body) = try await transport.send(request, nil)
        } catch {
            lock?.release()
            throw error
        }
        return await finish(request, response: response, body: body, key: key, record: record,
                            requestTime: requestTime, responseTime: now, lock: lock)
    }

    /// The origin's answer to a GET is stored when allowed: at once when its body is in
    /// memory, otherwise as the body is read (see `BodyRecorder`).
    func finish(_ request: HTTPRequest, response: HTTPResponse, body: HTTPCacheBody, key: String,
                record: HTTPCacheRecord?, requestTime: Double, responseTime: Double,
                lock: MissLock? = nil) async -> HTTPCacheStreamingResponse {
        // A streamed body that is being stored takes the lock along; otherwise it goes here.
        var lock = lock
        defer { lock?.release() }
        let response = response.dated(responseTime)
        if request.method == .get {
            let declaredCount = response.headerFields[.contentLength].flatMap { Int64($0) }
            if isStorable(response, bodyCount: body.knownCount ?? declaredCount, for: request) {
                if case .bytes(let bytes) = body.source {
                    await store(response, body: .bytes(bytes), for: request, key: key, record: record,
                                requestTime: requestTime, responseTime: responseTime)
                } else {
                    let recorder = BodyRecorder(disk: storage.disk, threshold: configuration.largeBodyThreshold,
                                                limit: configuration.maximumBodySize, lock: lock) { [self] stored in
                        await store(response, body: stored, for: request, key: key, record: record,
                                    requestTime: requestTime, responseTime: responseTime)
                    }
                    lock = nil
                    return HTTPCacheStreamingResponse(response: response, body: .teeing(body, into: recorder), outcome: .miss)
                }
            }
        } else if request.method == .head, response.status.code == 200, var record,
                  let index = record.selectIndex(for: request), record[index].sameValidators(as: response) {
            // A HEAD response freshens the stored GET response it describes (§4.3.5).
            record[index] = record[index].updated(with: response, requestTime: requestTime, responseTime: responseTime)
            await save(record, forKey: key)
        }
        return HTTPCacheStreamingResponse(response: response, body: body, outcome: .miss)
    }

    /// A stored response as an answer to `request`: with its current age, without a body for
    /// HEAD, and as a 304 when the request's own conditions hold (§4.3.2).
    func serve(_ stored: StoredResponse, body: OpenedBody, age: Double, to request: HTTPRequest,
               outcome: HTTPCacheResponse.Outcome) -> HTTPCacheStreamingResponse {
        var response = stored.response(age: age)
        if stored.status == 200, request.conditionsHold(for: stored) == false {
            response.status = .notModified
            for name in [HTTPField.Name.contentLength, .contentType, .contentEncoding] { response.headerFields[name] = nil }
            return HTTPCacheStreamingResponse(response: response, body: .empty, outcome: outcome)
        }
        return HTTPCacheStreamingResponse(response: response, body: request.method == .head ? .empty : body.body(),
                                          outcome: outcome)
    }

    /// A range of a stored complete response: a 206, or a 416 when the range selects nothing.
    func serve(_ stored: StoredResponse, body: OpenedBody, range: ByteRange, age: Double,
               outcome: HTTPCacheResponse.Outcome) -> HTTPCacheStreamingResponse {
        var response = stored.response(age: age)
        response.headerFields[.contentLength] = nil
        let length = Int(body.count)
        guard let bytes = range.resolve(length: length) else {
            response.status = .rangeNotSatisfiable
            response.headerFields[.contentRange] = "bytes */\(length)"
            return HTTPCacheStreamingResponse(response: response, body: .empty, outcome: outcome)
        }
        response.status = .partialContent
        response.headerFields[.contentRange] = "bytes \(bytes.lowerBound)-\(bytes.upperBound - 1)/\(length)"
        return HTTPCacheStreamingResponse(response: response,
                                          body: body.body(range: Int64(bytes.lowerBound)..<Int64(bytes.upperBound)),
                                          outcome: outcome)
    }

    static func unsatisfiable() -> HTTPCacheStreamingResponse {
        HTTPCacheStreamingResponse(response: HTTPResponse(status: .gatewayTimeout), body: .empty, outcome: .unsatisfiable)
    }

    /// The new response, if any, is read to its end, which stores it.
    func revalidateInBackground(_ request: HTTPRequest, key: String, transport: OriginTransport) {
        revalidations.start(key: key) { [self] in
            guard let record = await load(key), let index = record.selectIndex(for: request),
                  let body = openBody(of: record[index]) else { return }
            let freshness = Freshness(of: record[index], mode: configuration.mode,
                                      heuristic: configuration.heuristic, now: now)
            guard let answer = try? await validate(request, key: key, record: record, index: index, body: body,
                                                   freshness: freshness, directives: RequestDirectives(request),
                                                   transport: transport)
            else { return }
            if answer.outcome == .miss { try? await answer.body.drain() }
        }
    }
}

/// What a request's `Cache-Control` asks of stored responses (RFC 9111 §5.2.1).
struct RequestDirectives {
    let control: CacheControl
    let noCache: Bool
    let onlyIfCached: Bool
    let noStore: Bool

    /// A request without `Cache-Control` or `Pragma` asks nothing of stored responses.
    static let none = RequestDirectives(lines: [], pragmaNoCache: false)

    init(_ request: HTTPRequest) {
        let lines = request.headerFields[values: .cacheControl]
        // `Pragma: no-cache` counts only without Cache-Control (RFC 9111 §5.4).
        let pragmaNoCache = lines.isEmpty
            && request.headerFields[values: .pragmaField].contains { $0.lowercased().contains("no-cache") }
        if lines.isEmpty && !pragmaNoCache {
            self = .none
            return
        }
        self.init(lines: lines, pragmaNoCache: pragmaNoCache)
    }

    private init(lines: [String], pragmaNoCache: Bool) {
        control = CacheControl(lines)
        noCache = control.has("no-cache") || pragmaNoCache
        onlyIfCached = control.has("only-if-cached")
        noStore = control.has("no-store")
    }

    /// Whether `stored` may answer without contacting the origin.
    func accepts(_ stored: StoredResponse, _ freshness: Freshness, mode: HTTPCache.Mode) -> Bool {
        if noCache || freshness.requiresValidation { return false }
        if let maxAge = control.seconds("max-age")?.value, freshness.age > Double(maxAge) { return false }
        if let minFresh = control.seconds("min-fresh")?.value, freshness.lifetime - freshness.age < Double(minFresh) {
            return false
        }
        if freshness.isFresh { return true }
        guard control.has("max-stale"), freshness.mayServeStale(mode: mode) else { return false }
        guard let limit = control.seconds("max-stale") else { return false }
        switch limit {
        case .invalid: return control.directives["max-stale"] == .some(nil)  // no value: any staleness
        case .seconds(let seconds): return freshness.staleness <= Double(seconds)
        }
    }

    /// Whether a stale response may stand in for an error (RFC 5861 §4).
    func allowsStaleIfError(_ freshness: Freshness, mode: HTTPCache.Mode) -> Bool {
        guard freshness.mayServeStale(mode: mode) else { return false }
        if freshness.isFresh { return true }
        let window = [freshness.cacheControl.seconds("stale-if-error")?.value, control.seconds("stale-if-error")?.value]
            .compactMap { $0 }.max()
        guard let window else { return false }
        return freshness.staleness <= Double(window)
    }
}

extension HTTPRequest {
    /// Without conditions or a range: any client sending it wants the same full response.
    var isUnconditional: Bool {
        [HTTPField.Name.ifNoneMatch, .ifModifiedSince, .ifMatch, .ifUnmodifiedSince, .ifRange, .range]
            .allSatisfy { headerFields[$0] == nil }
    }

    /// Whether the request's own `If-None-Match` or `If-Modified-Since` hold against a
    /// stored 200 (§4.3.2): nil when it has neither; false means "not modified".
    func conditionsHold(for stored: StoredResponse) -> Bool? {
        guard method == .get || method == .head else { return nil }
        if let ifNoneMatch = headerFields[.ifNoneMatch] {
            let tags = ifNoneMatch.split(separator: ",").map { $0.trimmingHTTPWhitespace() }
            if tags.contains("*") { return false }
            guard let etag = stored.values("etag").first else { return true }
            return !tags.contains { EntityTag.weaklyEqual($0, etag.trimmingHTTPWhitespace()) }
        }
        if let ifModifiedSince = headerFields[.ifModifiedSince].flatMap(HTTPDate.parse) {
            let modified = stored.values("last-modified").first.flatMap(HTTPDate.parse)
                ?? stored.values("date").first.flatMap(HTTPDate.parse) ?? stored.responseTime
            return modified > ifModifiedSince
        }
        return nil
    }

    var withoutConditionals: HTTPRequest {
        var request = self
        for name in [HTTPField.Name.ifNoneMatch, .ifModifiedSince, .ifMatch, .ifUnmodifiedSince, .ifRange] {
            request.headerFields[name] = nil
        }
        return request
    }
}

extension HTTPResponse {
    /// The response with a `Date` of `time` if it has none: a recipient with a clock adds
    /// the Date a response lacks (RFC 9110 §6.6.1).
    func dated(_ time: Double) -> HTTPResponse {
        guard headerFields[.date] == nil else { return self }
        var response = self
        response.headerFields[.date] = HTTPDate.format(time)
        return response
    }
}

extension HTTPField.Name {
    /// `Pragma` (RFC 9111 §5.4), which swift-http-types does not name.
    static let pragmaField = HTTPField.Name("Pragma")!
}

enum EntityTag {
    static func weaklyEqual(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        func opaque(_ tag: some StringProtocol) -> Substring {
            tag.hasPrefix("W/") ? Substring(tag.dropFirst(2)) : Substring(tag)
        }
        return opaque(a) == opaque(b)
    }
}
#endif
