#if Hummingbird
import Foundation

/// Turns the values of a ``KVCachePersistDriver`` into the bytes its cache stores, and back.
///
/// One driver stores values of many types in one cache, so a coder's methods are generic
/// over the value's type (a ``KVCache/CacheCoder`` has one type).
public protocol PersistValueCoder: Sendable {
    /// Encodes `value`; throws if it cannot be represented.
    func encode<Object: Encodable>(_ value: Object) throws -> Data
    /// Decodes bytes written by `encode(_:)` as `type`; throws if they are not such a value.
    func decode<Object: Decodable>(_ type: Object.Type, from data: Data) throws -> Object
}
#endif
