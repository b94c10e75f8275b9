#if Vapor
import Foundation

/// Stores values as JSON, the same bytes Vapor's Redis and Fluent cache drivers store.
///
/// JSON keeps entries readable with the `kvcache` tool, decodes values whose type gained an
/// optional property since they were stored, and encodes top-level strings and numbers.
public struct JSONValueCoder: KVCacheValueCoder {
    /// Makes the encoder for each value (its date, data and key strategies, say).
    let makeEncoder: @Sendable () -> JSONEncoder
    /// Makes the decoder for each value; give it the strategies of `makeEncoder`'s encoder.
    let makeDecoder: @Sendable () -> JSONDecoder

    /// A coder with a default `JSONEncoder` and `JSONDecoder`, or with those `encoder` and
    /// `decoder` make (one per value, so their settings are never shared between threads).
    public init(
        encoder: @escaping @Sendable () -> JSONEncoder = { JSONEncoder() },
        decoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }
    ) {
        makeEncoder = encoder
        makeDecoder = decoder
    }

    /// `value` as JSON; throws the encoder's `EncodingError` (a non-finite `Double`, say).
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        try makeEncoder().encode(value)
    }

    /// The `type` value in the JSON `data`; throws the decoder's `DecodingError`.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try makeDecoder().decode(type, from: data)
    }
}
#endif
