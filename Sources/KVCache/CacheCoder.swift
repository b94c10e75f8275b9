import Foundation

/// Turns values into bytes for the disk level and back.
public protocol CacheCoder<Value>: Sendable {
    /// The type of the values the coder encodes and decodes.
    associatedtype Value
    /// Encodes a value; throws if it cannot be represented.
    func encode(_ value: Value) throws -> Data
    /// Decodes bytes written by `encode(_:)`; throws if they are not a valid value.
    func decode(_ data: Data) throws -> Value
}

/// Passes `Data` through untouched.
public struct DataCoder: CacheCoder {
    /// Creates a coder that passes `Data` through.
    public init() {}
    /// Returns `value` itself.
    @inlinable public func encode(_ value: Data) throws -> Data { value }
    /// Returns `data` itself.
    @inlinable public func decode(_ data: Data) throws -> Data { data }
}

/// Encodes any `Codable` value as JSON.
public struct JSONCoder<Value: Codable>: CacheCoder {
    /// Creates a coder that uses a default `JSONEncoder` and `JSONDecoder`.
    public init() {}
    /// Encodes `value` as JSON; throws the encoder's `EncodingError`.
    public func encode(_ value: Value) throws -> Data { try JSONEncoder().encode(value) }
    /// Decodes JSON written by `encode(_:)`; throws the decoder's `DecodingError`.
    public func decode(_ data: Data) throws -> Value { try JSONDecoder().decode(Value.self, from: data) }
}

/// Encodes any `Codable` value as a binary property list.
public struct PropertyListCoder<Value: Codable>: CacheCoder {
    /// Creates a coder that writes binary property lists.
    public init() {}
    /// Encodes `value` as a binary property list; throws the encoder's `EncodingError`.
    public func encode(_ value: Value) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try encoder.encode(value)
    }
    /// Decodes a property list written by `encode(_:)`; throws the decoder's `DecodingError`.
    public func decode(_ data: Data) throws -> Value {
        try PropertyListDecoder().decode(Value.self, from: data)
    }
}
