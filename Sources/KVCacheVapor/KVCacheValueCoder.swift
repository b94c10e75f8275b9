#if Vapor
import Foundation

/// Turns the values given to a KVCache-backed Vapor `Cache` into the bytes it stores, and back.
///
/// One cache holds values of many types, so it stores bytes and decodes them as the type each
/// `get` asks for. ``JSONValueCoder`` (``json``) is the default.
public protocol KVCacheValueCoder: Sendable {
    /// The bytes that stand for `value`; throws if it cannot be represented.
    func encode<T: Encodable>(_ value: T) throws -> Data
    /// The value of type `type` that `data` stands for; throws if it is not one.
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

extension KVCacheValueCoder where Self == JSONValueCoder {
    /// JSON through a default `JSONEncoder` and `JSONDecoder`: the driver's default.
    public static var json: JSONValueCoder { JSONValueCoder() }
}
#endif
