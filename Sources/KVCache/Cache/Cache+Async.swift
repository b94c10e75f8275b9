import Foundation

/// Async variants: a memory hit answers at once; disk work runs off the caller's executor.
extension Cache {
    @inlinable
    public func value(forKey key: String) async throws -> Value? {
        if let value = memory.value(forKey: key) { return value }
        return try await diskResultOffThread(forKey: key).value
    }

    @inlinable
    public func result(forKey key: String) async throws -> CacheResult<Value> {
        if let value = memory.value(forKey: key) { return .memory(value) }
        return try await diskResultOffThread(forKey: key)
    }

    @usableFromInline
    func diskResultOffThread(forKey key: String) async throws -> CacheResult<Value> {
        try await disk.onWorkPool { try self.diskResult(forKey: key) }
    }

    public func contains(_ key: String) async throws -> Bool {
        if memory.contains(key) { return true }
        return try await disk.onWorkPool { try self.contains(key) }
    }

    public func extendedData(forKey key: String) async throws -> Data? {
        try await disk.onWorkPool { try self.extendedData(forKey: key) }
    }

    public func setValue(
        _ value: Value, forKey key: String, expiration: Expiration = .never, extendedData: Data? = nil,
        diskWrite: DiskWrite = .immediate
    ) async throws {
        // Nothing to wait for but the encoding.
        if diskWrite == .background {
            return try store(value, forKey: key, expiration: expiration, extendedData: extendedData, diskWrite: diskWrite)
        }
        try await disk.onWorkPool {
            try self.store(value, forKey: key, expiration: expiration, extendedData: extendedData, diskWrite: diskWrite)
        }
    }

    @discardableResult
    public func touch(_ key: String, expiration: Expiration) async throws -> Bool {
        try await disk.onWorkPool { try self.touch(key, expiration: expiration) }
    }

    @discardableResult
    public func setValueIfAbsent(_ value: Value, forKey key: String, expiration: Expiration = .never) async throws -> Bool {
        try await disk.onWorkPool { try self.setValueIfAbsent(value, forKey: key, expiration: expiration) }
    }

    public func setValues(_ values: [String: Value], expiration: Expiration = .never) async throws {
        try await disk.onWorkPool { try self.setValues(values, expiration: expiration) }
    }

    public func values(forKeys keys: [String]) async throws -> [String: Value] {
        try await disk.onWorkPool { try self.values(forKeys: keys) }
    }

    /// The keys stored on disk that start with `prefix`, in byte-wise order (see
    /// `DiskCache.keys(withPrefix:pageSize:)`); values written with `.skipped` live in
    /// memory only and are not listed.
    public func keys(withPrefix prefix: String = "", pageSize: Int = 1_000) -> DiskCache.KeySequence {
        disk.keys(withPrefix: prefix, pageSize: pageSize)
    }

    public func removeValue(forKey key: String) async throws {
        try await disk.onWorkPool { try self.removeValue(forKey: key) }
    }

    @discardableResult
    public func removeValues(withPrefix prefix: String) async throws -> Int {
        try await disk.onWorkPool { try self.removeValues(withPrefix: prefix) }
    }

    public func removeAll() async throws {
        try await disk.onWorkPool { try self.removeAll() }
    }

    public func removeAll(progress: @escaping @Sendable (_ removed: Int, _ total: Int) -> Void) async throws {
        try await disk.onWorkPool { try self.removeAll(progress: progress) }
    }

    public func waitForBackgroundWrites() async throws {
        try await disk.onWorkPool { try self.waitForBackgroundWrites() }
    }

    public func flush(durability: DiskCache.Durability = .synced) async throws {
        try await disk.onWorkPool { try self.flush(durability: durability) }
    }
}
