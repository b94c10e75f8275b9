#if HTTP
import Foundation
import HTTPTypes

/// One stored response to a URL: what the origin sent, when it was asked and answered, and
/// the values of the request's fields its `Vary` names (the variant it answers).
struct StoredResponse: Sendable {
    let status: Int
    let reasonPhrase: String
    /// Header fields in the order received, names as received.
    private(set) var fields: [Field]
    /// When the request that produced it was sent and its answer received (seconds since 1970).
    private(set) var requestTime: Double
    private(set) var responseTime: Double
    /// The origin's `Date`, or `responseTime` if it has none that parses: parsed when the
    /// response arrives and kept in the record, since every hit needs it for its age.
    private(set) var date: Double
    /// Lower-cased field names from `Vary`, each with the request's value (nil: absent).
    let varyValues: [VaryValue]
    let body: Data

    // Derived from the fields and times once, when the response is built, decoded or
    // updated, not on every hit (`derive()`).
    /// Its `Cache-Control` directives.
    private(set) var cacheControl = CacheControl([])
    /// The response as served, without `Age`.
    private(set) var response = HTTPResponse(status: .ok)
    /// Its age when it was received (RFC 9111 §4.2.3): the age is this plus the time since.
    private(set) var correctedInitialAge: Double = 0

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

    init(response: HTTPResponse, body: Data, varyValues: [VaryValue], requestTime: Double, responseTime: Double) {
        status = response.status.code
        reasonPhrase = response.status.reasonPhrase
        let nominated = Self.connectionNominated(by: response.headerFields)
        fields = response.headerFields.compactMap { field in
            StoredResponse.isStored(field.name) && !nominated.contains(field.name.canonicalName)
                ? Field(name: field.name.rawName, value: field.value) : nil
        }
        self.requestTime = requestTime
        self.responseTime = responseTime
        date = responseTime
        self.varyValues = varyValues
        self.body = body
        date = parsedDate()
        derive()
    }

    init(status: Int, reasonPhrase: String, fields: [Field], requestTime: Double, responseTime: Double, date: Double,
         varyValues: [VaryValue], body: Data) {
        self.status = status
        self.reasonPhrase = reasonPhrase
        self.fields = fields
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.date = date
        self.varyValues = varyValues
        self.body = body
        derive()
    }

    private mutating func derive() {
        cacheControl = CacheControl(values("cache-control"))
        var headerFields = HTTPFields()
        for field in fields {
            if let name = HTTPField.Name(field.name) { headerFields.append(HTTPField(name: name, value: field.value)) }
        }
        response = HTTPResponse(status: .init(code: status, reasonPhrase: reasonPhrase), headerFields: headerFields)
        // The first member of the first line counts (RFC 9110 §5.3: lines form one list).
        let ageValue = values("age").first.flatMap { line -> Double? in
            let trimmed = (line.split(separator: ",", omittingEmptySubsequences: false).first ?? "").trimmingHTTPWhitespace()
            guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return trimmed.utf8.count > 10 ? 2_147_483_648 : Double(trimmed) ?? nil
        } ?? 0
        let apparentAge = max(0, responseTime - date)
        let responseDelay = max(0, responseTime - requestTime)
        correctedInitialAge = max(apparentAge, ageValue + responseDelay)
    }

    /// The values of the fields named `name` (lower-cased), in order.
    func values(_ name: String) -> [String] {
        fields.compactMap { $0.isNamed(name) ? $0.value : nil }
    }

    private func parsedDate() -> Double { values("date").first.flatMap(HTTPDate.parse) ?? responseTime }

    /// The stored response as the cache serves it: with its current `Age`, in whole seconds.
    func response(age: Double) -> HTTPResponse {
        var response = response
        response.headerFields[.age] = String(Int(min(age, 2_147_483_648).rounded(.down)))
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

    /// Replaces the stored fields with those of a 304 or HEAD response to a validation
    /// (RFC 9111 §3.2), keeping `Content-Length`, which describes the stored body.
    mutating func update(with response: HTTPResponse, requestTime: Double, responseTime: Double) {
        let kept: Set<String> = ["content-length"]
        var replaced = Set<String>()
        let nominated = Self.connectionNominated(by: response.headerFields)
        for field in response.headerFields where Self.isStored(field.name) && !nominated.contains(field.name.canonicalName) {
            let name = field.name.canonicalName
            if !kept.contains(name) { replaced.insert(name) }
        }
        fields.removeAll { replaced.contains($0.name.lowercased()) }
        for field in response.headerFields where replaced.contains(field.name.canonicalName) {
            fields.append(Field(name: field.name.rawName, value: field.value))
        }
        self.requestTime = requestTime
        self.responseTime = responseTime
        date = parsedDate()
        derive()
    }
}

/// Every stored response to one URL, newest last: the record kept under the URL's key.
struct StoredResponses: Sendable {
    var variants: [StoredResponse]

    /// A stored record's bytes start with this, then a version.
    private static let magic: [UInt8] = Array("KVHTTP".utf8)
    private static let version: UInt8 = 2

    func encoded() -> Data {
        var writer = ByteWriter()
        writer.bytes(Self.magic)
        writer.byte(Self.version)
        writer.integer(UInt32(variants.count))
        for variant in variants {
            writer.integer(UInt32(variant.status))
            writer.string(variant.reasonPhrase)
            writer.integer(variant.requestTime.bitPattern)
            writer.integer(variant.responseTime.bitPattern)
            writer.integer(variant.date.bitPattern)
            writer.integer(UInt32(variant.varyValues.count))
            for vary in variant.varyValues {
                writer.string(vary.name)
                writer.byte(vary.value == nil ? 0 : 1)
                writer.string(vary.value ?? "")
            }
            writer.integer(UInt32(variant.fields.count))
            for field in variant.fields {
                writer.string(field.name)
                writer.string(field.value)
            }
            writer.integer(UInt64(variant.body.count))
            writer.data.append(variant.body)
        }
        return writer.data
    }

    /// The record in `data`, or nil when it is not one this version wrote (damaged, or
    /// another writer's value under the key): the caller treats it as a miss.
    init?(decoding data: Data) {
        var reader = ByteReader(data)
        guard reader.bytes(Self.magic.count) == Self.magic, reader.byte() == Self.version,
              let count = reader.integer(UInt32.self), count <= 1024
        else { return nil }
        var variants: [StoredResponse] = []
        for _ in 0..<count {
            guard let status = reader.integer(UInt32.self), status <= 999, let reason = reader.string(),
                  let requestTime = reader.integer(UInt64.self), let responseTime = reader.integer(UInt64.self),
                  let date = reader.integer(UInt64.self),
                  // A time that is not finite would make the age NaN: damaged, not a response.
                  [requestTime, responseTime, date].allSatisfy({ Double(bitPattern: $0).isFinite }),
                  let varyCount = reader.integer(UInt32.self), varyCount <= 1024
            else { return nil }
            var varyValues: [StoredResponse.VaryValue] = []
            for _ in 0..<varyCount {
                guard let name = reader.string(), let present = reader.byte(), let value = reader.string() else { return nil }
                varyValues.append(.init(name: name, value: present == 0 ? nil : value))
            }
            guard let fieldCount = reader.integer(UInt32.self), fieldCount <= 65_536 else { return nil }
            var fields: [StoredResponse.Field] = []
            for _ in 0..<fieldCount {
                guard let name = reader.string(), let value = reader.string() else { return nil }
                fields.append(.init(name: name, value: value))
            }
            guard let bodyCount = reader.integer(UInt64.self), let body = reader.data(Int(clamping: bodyCount)) else { return nil }
            variants.append(StoredResponse(
                status: Int(status), reasonPhrase: reason, fields: fields,
                requestTime: Double(bitPattern: requestTime), responseTime: Double(bitPattern: responseTime),
                date: Double(bitPattern: date), varyValues: varyValues, body: body))
        }
        guard reader.isAtEnd else { return nil }
        self.variants = variants
    }

    init(variants: [StoredResponse]) {
        self.variants = variants
    }
}

private struct ByteWriter {
    var data = Data()

    mutating func byte(_ value: UInt8) { data.append(value) }
    mutating func bytes(_ value: [UInt8]) { data.append(contentsOf: value) }
    mutating func integer<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }
    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        integer(UInt32(utf8.count))
        data.append(contentsOf: utf8)
    }
}

private struct ByteReader {
    let data: Data
    var offset: Int

    init(_ data: Data) {
        self.data = data
        offset = data.startIndex
    }

    var isAtEnd: Bool { offset == data.endIndex }

    mutating func data(_ count: Int) -> Data? {
        guard count >= 0, data.endIndex - offset >= count else { return nil }
        defer { offset += count }
        return data[offset..<offset + count]
    }

    mutating func bytes(_ count: Int) -> [UInt8]? { data(count).map(Array.init) }
    mutating func byte() -> UInt8? { bytes(1)?.first }

    mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
        guard let raw = data(MemoryLayout<T>.size) else { return nil }
        var value = T.zero
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: raw) }
        return T(littleEndian: value)
    }

    mutating func string() -> String? {
        guard let count = integer(UInt32.self), let raw = data(Int(count)) else { return nil }
        return String(decoding: raw, as: UTF8.self)
    }
}
#endif
