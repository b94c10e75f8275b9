import Foundation

/// Typed values through a `CacheCoder`.
extension DiskCache {
    /// The decoded value for `key`, or nil. Throws `decodingFailed` if the bytes do not decode.
    public func value<Coder: CacheCoder>(forKey key: String, coder: Coder) throws -> Coder.Value? {
        guard let data = try value(forKey: key) else { return nil }
        do {
            return try coder.decode(data)
        } catch {
            throw KVCacheError.decodingFailed(key: key, message: String(describing: error), underlyingError: error)
        }
    }

    /// Encodes `value` with `coder` and stores it. Throws `encodingFailed` if it cannot be encoded.
    public func setValue<Coder: CacheCoder>(_ value: Coder.Value, forKey key: String, coder: Coder,
                                            expiration: Expiration = .never, extendedData: Data? = nil) throws {
        let data: Data
        do {
            data = try coder.encode(value)
        } catch {
            throw KVCacheError.encodingFailed(String(describing: error), underlyingError: error)
        }
        try setValue(data, forKey: key, expiration: expiration, extendedData: extendedData)
    }

    /// The async variant of `value(forKey:coder:)`, run on the bounded work pool.
    public func value<Coder: CacheCoder>(forKey key: String, coder: Coder) async throws -> Coder.Value?
    where Coder.Value: Sendable {
        try await onWorkPool { try self.value(forKey: key, coder: coder) }
    }

    /// The async variant of `setValue(_:forKey:coder:expiration:extendedData:)`, run on the
    /// bounded work pool.
    public func setValue<Coder: CacheCoder>(_ value: Coder.Value, forKey key: String, coder: Coder,
                                            expiration: Expiration = .never, extendedData: Data? = nil) async throws
    where Coder.Value: Sendable {
        try await onWorkPool {
            try self.setValue(value, forKey: key, coder: coder, expiration: expiration, extendedData: extendedData)
        }
    }
}
