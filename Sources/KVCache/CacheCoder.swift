import Foundation

/// Turns values into bytes for the disk level and back.
public protocol CacheCoder<Value>: Sendable {
    associatedtype Value
    /// Encodes a value; throws if it cannot be represented.
    func encode(_ value: Value) throws -> Data
    /// Decodes bytes written by `encode(_:)`; throws if they are not a valid value.
    func decode(_ data: Data) throws -> Value
}

/// Passes `Data` through untouched.
public struct DataCoder: CacheCoder {
    public init() {}
    @inlinable public func encode(_ value: Data) throws -> Data { value }
    @inlinable public func decode(_ data: Data) throws -> Data { data }
}

/// Encodes any `Codable` value as JSON.
public struct JSONCoder<Value: Codable>: CacheCoder {
    public init() {}
    public func encode(_ value: Value) throws -> Data { try JSONEncoder().encode(value) }
    public func decode(_ data: Data) throws -> Value { try JSONDecoder().decode(Value.self, from: data) }
}

/// Encodes any `Codable` value as a binary property list.
public struct PropertyListCoder<Value: Codable>: CacheCoder {
    public init() {}
    public func encode(_ value: Value) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try encoder.encode(value)
    }
    public func decode(_ data: Data) throws -> Value {
        try PropertyListDecoder().decode(Value.self, from: data)
    }
}
