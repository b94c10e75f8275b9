#if Hummingbird
import Foundation

/// Encodes persisted values as JSON, as Hummingbird's Redis and Valkey drivers store them.
public struct JSONPersistCoder: PersistValueCoder {
    let encoder: JSONEncoder
    let decoder: JSONDecoder

    /// Creates a coder with `encoder` and `decoder` (default: plain ones). They are shared by
    /// every call, so do not change their settings after passing them.
    public init(encoder: JSONEncoder = JSONEncoder(), decoder: JSONDecoder = JSONDecoder()) {
        self.encoder = encoder
        self.decoder = decoder
    }

    /// Encodes `value` as JSON; throws the encoder's `EncodingError`.
    public func encode<Object: Encodable>(_ value: Object) throws -> Data {
        try encoder.encode(value)
    }

    /// Decodes JSON as `type`; throws the decoder's `DecodingError`.
    public func decode<Object: Decodable>(_ type: Object.Type, from data: Data) throws -> Object {
        try decoder.decode(type, from: data)
    }
}
#endif
