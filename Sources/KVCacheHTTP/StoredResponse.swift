#if HTTP
import Foundation
import HTTPTypes
import Synchronization

/// One stored response to a URL: what the origin sent, when it was asked and answered, and
/// the values of the request's fields its `Vary` names (the variant it answers).
///
/// Immutable (but for the last answer built from it, kept for the next hit), and a class: a
/// hit reads one without copying its fields, and a 304 or HEAD update makes a new one
/// (`updated(with:requestTime:responseTime:)`).
final class StoredResponse: Sendable {
    // The fields a fresh hit reads come first, so that they share as few cache lines as
    // they can (a class's stored properties are laid out in the order declared).
    /// The response last served, with its Age in whole seconds.
    private let lastServed = Mutex<(age: Int, response: HTTPResponse)?>(nil)
    /// When it was received (seconds since 1970).
    let responseTime: Double
    /// Its age when it was received (RFC 9111 §4.2.3): the age is this plus the time since.
    let correctedInitialAge: Double
    /// Its freshness lifetime from `s-maxage`, `max-age` or `Expires`, in a shared and in a
    /// private cache; NaN where it has none (8 bytes each, where an optional takes 16: the
    /// fields a hit reads stay close together).
    private let sharedSeconds: Double
    private let privateSeconds: Double
    /// `no-cache`: every use needs a successful validation (§5.2.2.4).
    let requiresValidation: Bool
    /// Directives that forbid serving it stale (§4.2.4): in any cache, and in a shared one.
    let forbidsStale: Bool
    let forbidsStaleWhenShared: Bool
    /// Lower-cased field names from `Vary`, each with the request's value (nil: absent).
    let varyValues: [VaryValue]
    let body: StoredBody

    /// Its freshness lifetime in a shared and in a private cache; nil where it has none (then
    /// heuristics may apply).
    var sharedLifetime: Double? { sharedSeconds.isNaN ? nil : sharedSeconds }
    var privateLifetime: Double? { privateSeconds.isNaN ? nil : privateSeconds }

    let status: Int
    let reasonPhrase: String
    /// Header fields in the order received, names as received.
    let fields: [Field]
    /// When the request that produced it was sent (seconds since 1970).
    let requestTime: Double
    /// The origin's `Date`, or `responseTime` if it has none that parses: parsed when the
    /// response arrives and kept in the record, since every hit needs it for its age.
    let date: Double
    /// Its `Cache-Control` directives (derived once, when the response is built or decoded,
    /// as the other fields below and the lifetimes above).
    let cacheControl: CacheControl
    /// The response as served, without `Age`.
    let response: HTTPResponse
    /// Seconds from `Last-Modified` to `Date`, where heuristic freshness may use them.
    let heuristicSpan: Double?

    struct Field: Sendable, Equatable {
        var name: String
        var value: String

        /// Whether the field is named `lowercased`, compared without case and without
        /// lower-casing the stored name (a hit asks several names of every field).
        func isNamed(_ lowercased: String) -> Bool {
            name.utf8.elementsEqual(lowercased.utf8) { stored, asked in
                (stored >= 0x41 && stored <= 0x5A ? stored | 0x20 : stored) == asked
            }
        }
    }

    struct VaryValue: Sendable, Equatable {
        var name: String
        var value: String?
    }

    /// A response as it arrives: its `Date` parsed, or `responseTime` when it has none.
    convenience init(response: HTTPResponse, body: StoredBody, varyValues: [VaryValue], requestTime: Double,
                     responseTime: Double) {
        let nominated = Self.connectionNominated(by: response.headerFields)
        let fields = response.headerFields.compactMap { field in
            StoredResponse.isStored(field.name) && !nominated.contains(field.name.canonicalName)
                ? Field(name: field.name.rawName, value: field.value) : nil
        }
        self.init(status: response.status.code, reasonPhrase: response.status.reasonPhrase, fields: fields,
                  requestTime: requestTime, responseTime: responseTime,
                  date: Self.parsedDate(in: fields, responseTime: responseTime), varyValues: varyValues, body: body)
    }

    init(status: Int, reasonPhrase: String, fields: [Field], requestTime: Double, responseTime: Double, date: Double,
         varyValues: [VaryValue], body: StoredBody) {
        self.status = status
        self.reasonPhrase = reasonPhrase
        self.fields = fields
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.date = date
        self.varyValues = varyValues
        self.body = body
        cacheControl = CacheControl(Self.values("cache-control", in: fields))
        var headerFields = HTTPFields()
        // The origin's Age is left out: every answer carries its own (`response(age:)`).
        for field in fields where !field.isNamed("age") {
            if let name = HTTPField.Name(field.name) { headerFields.append(HTTPField(name: name, value: field.value)) }
        }
        response = Self.response(status: status, reasonPhrase: reasonPhrase, headerFields: headerFields)
        // The first member of the first line counts (RFC 9110 §5.3: lines form one list).
        let ageValue = Self.values("age", in: fields).first.flatMap { line -> Double? in
            let trimmed = (line.split(separator: ",", omittingEmptySubsequences: false).first ?? "").trimmingHTTPWhitespace()
            guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return trimmed.utf8.count > 10 ? 2_147_483_648 : Double(trimmed) ?? nil
        } ?? 0
        let apparentAge = max(0, responseTime - date)
        let responseDelay = max(0, responseTime - requestTime)
        correctedInitialAge = max(apparentAge, ageValue + responseDelay)

        let control = cacheControl
        let expires = Self.values("expires", in: fields).first.map { value in
            // An invalid date, "0" among them, means already expired (§5.3).
            HTTPDate.parse(value).map { max(0, $0 - date) } ?? 0
        }
        let maxAge = control.seconds("max-age").map { Double($0.value ?? 0) } ?? expires
        privateSeconds = maxAge ?? .nan
        sharedSeconds = control.seconds("s-maxage").map { Double($0.value ?? 0) } ?? maxAge ?? .nan
        // Heuristic freshness (§4.2.2): only for the status codes defined as heuristically
        // cacheable, or with `public`, and only from Last-Modified.
        if HTTPCache.heuristicallyCacheable.contains(status) || control.has("public"),
           let lastModified = Self.values("last-modified", in: fields).first.flatMap(HTTPDate.parse),
           date > lastModified {
            heuristicSpan = date - lastModified
        } else {
            heuristicSpan = nil
        }
        requiresValidation = control.has("no-cache")
        forbidsStale = control.has("must-revalidate") || requiresValidation
        forbidsStaleWhenShared = forbidsStale || control.has("proxy-revalidate") || control.has("s-maxage")
    }

    /// A response whose status line (a storage of its own in `HTTPResponse`) is shared with
    /// the other stored responses of that status line: serving one then touches one object
    /// fewer, a cache miss saved per hit once the records outgrow the processor's caches.
    private static func response(status: Int, reasonPhrase: String, headerFields: HTTPFields) -> HTTPResponse {
        let line = StatusLine(code: status, reasonPhrase: reasonPhrase)
        var response = statusLines.withLock { lines in
            if let shared = lines[line] { return shared }
            let response = HTTPResponse(status: .init(code: status, reasonPhrase: reasonPhrase))
            // Bounded: an origin that invents reason phrases gets unshared ones past this.
            if lines.count < 64 { lines[line] = response }
            return response
        }
        response.headerFields = headerFields
        return response
    }

    private struct StatusLine: Hashable {
        var code: Int
        var reasonPhrase: String
    }

    private static let statusLines = Mutex<[StatusLine: HTTPResponse]>([:])

    /// The values of the fields named `name` (lower-cased), in order.
    func values(_ name: String) -> [String] {
        Self.values(name, in: fields)
    }

    private static func values(_ name: String, in fields: [Field]) -> [String] {
        fields.compactMap { $0.isNamed(name) ? $0.value : nil }
    }

    private static func parsedDate(in fields: [Field], responseTime: Double) -> Double {
        values("date", in: fields).first.flatMap(HTTPDate.parse) ?? responseTime
    }

    /// The stored response as the cache serves it: with its current `Age`, in whole seconds.
    func response(age: Double) -> HTTPResponse {
        let seconds = Int(min(max(0, age), 2_147_483_648).rounded(.down))
        // A hot response is served many times a second with the same Age: the last one built
        // is kept, since building one copies every field.
        if let served = lastServed.withLock({ $0?.age == seconds ? $0?.response : nil }) { return served }
        var response = response
        // `response` has no Age (see init), so an append does.
        response.headerFields.append(HTTPField(name: .age, value: String(seconds)))
        lastServed.withLock { $0 = (seconds, response) }
        return response
    }

    /// Hop-by-hop fields and those about one connection are not stored (RFC 9111 §3.1).
    static func isStored(_ name: HTTPField.Name) -> Bool {
        !hopByHop.contains(name.canonicalName)
    }

    /// The fields a `Connection` header names: about this connection only, never stored
    /// or forwarded (RFC 9110 §7.6.1).
    static func connectionNominated(by fields: HTTPFields) -> Set<String> {
        Set(fields[values: .connection].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingHTTPWhitespace().lowercased() }.filter { !$0.isEmpty })
    }

    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authentication-info", "trailer",
    ]

    /// This response with the fields of a 304 or HEAD response to a validation in place of
    /// its own (RFC 9111 §3.2), keeping `Content-Length`, which describes the stored body.
    func updated(with response: HTTPResponse, requestTime: Double, responseTime: Double) -> StoredResponse {
        let kept: Set<String> = ["content-length"]
        var replaced = Set<String>()
        let nominated = Self.connectionNominated(by: response.headerFields)
        for field in response.headerFields where Self.isStored(field.name) && !nominated.contains(field.name.canonicalName) {
            let name = field.name.canonicalName
            if !kept.contains(name) { replaced.insert(name) }
        }
        var fields = self.fields
        fields.removeAll { replaced.contains($0.name.lowercased()) }
        for field in response.headerFields where replaced.contains(field.name.canonicalName) {
            fields.append(Field(name: field.name.rawName, value: field.value))
        }
        return StoredResponse(status: status, reasonPhrase: reasonPhrase, fields: fields, requestTime: requestTime,
                              responseTime: responseTime, date: Self.parsedDate(in: fields, responseTime: responseTime),
                              varyValues: varyValues, body: body)
    }
}

#endif
