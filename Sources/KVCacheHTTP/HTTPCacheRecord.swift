#if HTTP
import Foundation
import KVCache

/// What an ``HTTPCache`` keeps under one URL: every stored response to it (one per variant
/// that `Vary` tells apart), newest last. Values of a `Cache<HTTPCacheRecord>`; read and
/// written through ``HTTPCache`` only.
public struct HTTPCacheRecord: Sendable {
    /// One variant, the common case, is kept without an array: a hit then reads one object
    /// fewer (the array's), which costs a cache miss when the records outgrow the caches.
    private enum Variants: Sendable {
        case one(StoredResponse)
        case several([StoredResponse])
    }

    private var storage: Variants

    /// The stored responses, newest last.
    var variants: [StoredResponse] {
        switch storage {
        case .one(let only): return [only]
        case .several(let all): return all
        }
    }

    /// The only variant, when it holds one.
    var onlyVariant: StoredResponse? {
        if case .one(let only) = storage { return only }
        return nil
    }

    /// The variant at `index` (in `variants`).
    subscript(index: Int) -> StoredResponse {
        get {
            switch storage {
            case .one(let only):
                precondition(index == 0, "variant index out of range")
                return only
            case .several(let all): return all[index]
            }
        }
        set {
            var all = variants
            all[index] = newValue
            self = HTTPCacheRecord(variants: all)
        }
    }

    /// The size of its encoding in bytes, bodies kept in the record included.
    public var byteCount: Int { encoded().count }

    /// A stored record's bytes start with this, then a version.
    private static let magic: [UInt8] = Array("KVHTTP".utf8)
    /// 3 says where each body is (in the record or in a value of its own); 2 kept every body
    /// in the record.
    private static let version: UInt8 = 3

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
            switch variant.body {
            case .bytes(let bytes):
                writer.byte(0)
                writer.integer(UInt64(bytes.count))
                writer.data.append(bytes)
            case .file(let key, let count):
                writer.byte(1)
                writer.string(key)
                writer.integer(UInt64(count))
            }
        }
        return writer.data
    }

    /// The record in `data`, or nil when it is not one this version wrote (damaged, or
    /// another writer's value under the key): the caller treats it as a miss.
    init?(decoding data: Data) {
        var reader = ByteReader(data)
        guard reader.bytes(Self.magic.count) == Self.magic, let version = reader.byte(), version == 2 || version == 3,
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
            let body: StoredBody
            let tag: UInt8? = version == 2 ? 0 : reader.byte()
            switch tag {
            case 0?:
                guard let count = reader.integer(UInt64.self), let bytes = reader.data(Int(clamping: count)) else { return nil }
                body = .bytes(bytes)
            case 1?:
                guard let key = reader.string(), let count = reader.integer(UInt64.self), count <= UInt64(Int64.max)
                else { return nil }
                body = .file(key: key, count: Int64(count))
            default:
                return nil
            }
            variants.append(StoredResponse(
                status: Int(status), reasonPhrase: reason, fields: fields,
                requestTime: Double(bitPattern: requestTime), responseTime: Double(bitPattern: responseTime),
                date: Double(bitPattern: date), varyValues: varyValues, body: body))
        }
        guard reader.isAtEnd else { return nil }
        self.init(variants: variants)
    }

    init(variants: [StoredResponse]) {
        storage = variants.count == 1 ? .one(variants[0]) : .several(variants)
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
/// Turns an ``HTTPCacheRecord`` into the bytes the disk and remote levels keep, and back.
public struct HTTPCacheRecordCoder: CacheCoder {
    /// A coder of HTTP cache records.
    public init() {}

    /// The record's bytes.
    public func encode(_ value: HTTPCacheRecord) throws -> Data { value.encoded() }

    /// The record in `data`.
    ///
    /// - Throws: `KVCacheError.decodingFailed` when the bytes are not a record this version
    ///   reads (damaged, or another writer's value under the key).
    public func decode(_ data: Data) throws -> HTTPCacheRecord {
        guard let record = HTTPCacheRecord(decoding: data) else {
            throw KVCacheError(code: .decodingFailed, message: "not an HTTP cache record")
        }
        return record
    }
}
#endif
