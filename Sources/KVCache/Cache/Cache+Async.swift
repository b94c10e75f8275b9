import Foundation

/// Async variants: a memory hit answers at once; disk work runs off the caller's executor.
extension Cache {
    /// The async variant of `value(forKey:)`: a memory hit returns at once; a disk read runs on
    /// the bounded work pool.
    @inlinable
    public func value(forKey key: String) async throws -> Value? {
        if let value = memory.value(forKey: key) { return value }
        return try await diskResultOffThread(forKey: key).value
    }

    /// The async variant of `result(forKey:)`: a memory hit returns at once; a disk read runs
    /// on the bounded work pool.
    @inlinable
    public func result(forKey key: String) async throws -> CacheResult<Value> {
        if let value = memory.value(forKey: key) { return .memory(value) }
        return try await diskResultOffThread(forKey: key)
    }

    @usableFromInline
    func diskResultOffThread(forKey key: String) async throws -> CacheResult<Value> {
        try await disk.onWorkPool { try self.diskResult(forKey: key) }
    }

    /// The async variant of `contains(_:)`: a memory hit returns at once; otherwise the disk
    /// level is asked on the bounded work pool.
    public func contains(_ key: String) async throws -> Bool {
        if memory.contains(key) { return true }
        return try await disk.onWorkPool { try self.contains(key) }
    }

    /// The async variant of `expiration(forKey:)`: a memory hit returns at once; otherwise
    /// the disk level is asked on the bounded work pool.
    public func expiration(forKey key: String) async throws -> Expiration? {
        if let expiration = memory.expiration(forKey: key) { return expiration }
        return try await disk.onWorkPool { try self.expiration(forKey: key) }
    }

    /// The async variant of `extendedData(forKey:)`, run on the bounded work pool.
    public func extendedData(forKey key: String) async throws -> Data? {
        try await disk.onWorkPool { try self.extendedData(forKey: key) }
    }

    /// The async variant of `setValue(_:forKey:expiration:extendedData:diskWrite:)`, run on the
    /// bounded work pool; with `.background` there is no disk write to wait for, so it encodes
    /// the value and queues the write on the caller's thread, as the synchronous call does.
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

    /// The async variant of `touch(_:expiration:)`, run on the bounded work pool.
    @discardableResult
    public func touch(_ key: String, expiration: Expiration) async throws -> Bool {
        try await disk.onWorkPool { try self.touch(key, expiration: expiration) }
    }

    /// The async variant of `setValueIfAbsent(_:forKey:expiration:)`, run on the bounded work
    /// pool.
    @discardableResult
    public func setValueIfAbsent(_ value: Value, forKey key: String, expiration: Expiration = .never) async throws -> Bool {
        try await disk.onWorkPool { try self.setValueIfAbsent(value, forKey: key, expiration: expiration) }
    }

    /// The async variant of `setValues(_:expiration:)`, run on the bounded work pool.
    public func setValues(_ values: [String: Value], expiration: Expiration = .never) async throws {
        try await disk.onWorkPool { try self.setValues(values, expiration: expiration) }
    }

    /// The async variant of `values(forKeys:)`, run on the bounded work pool.
    public func values(forKeys keys: [String]) async throws -> [String: Value] {
        try await disk.onWorkPool { try self.values(forKeys: keys) }
    }

    /// The keys stored on disk that start with `prefix`, in byte-wise order (see
    /// `DiskCache.keys(withPrefix:pageSize:)`); values written with `.skipped` live in
    /// memory only and are not listed.
    public func keys(withPrefix prefix: String = "", pageSize: Int = 1_000) -> DiskCache.KeySequence {
        disk.keys(withPrefix: prefix, pageSize: pageSize)
    }

    /// The async variant of `removeValue(forKey:)`, run on the bounded work pool.
    public func removeValue(forKey key: String) async throws {
        try await disk.onWorkPool { try self.removeValue(forKey: key) }
    }

    /// The async variant of `removeValues(withPrefix:)`, run on the bounded work pool.
    @discardableResult
    public func removeValues(withPrefix prefix: String) async throws -> Int {
        try await disk.onWorkPool { try self.removeValues(withPrefix: prefix) }
    }

    /// The async variant of `removeAll()`, run on the bounded work pool.
    public func removeAll() async throws {
        try await disk.onWorkPool { try self.removeAll() }
    }

    /// The async variant of `removeAll(progress:)`, run on the bounded work pool, which also
    /// calls `progress`.
    public func removeAll(progress: @escaping @Sendable (_ removed: Int, _ total: Int) -> Void) async throws {
        try await disk.onWorkPool { try self.removeAll(progress: progress) }
    }

    /// The async variant of `waitForBackgroundWrites()`: waits on the bounded work pool rather
    /// than on the caller's thread.
    public func waitForBackgroundWrites() async throws {
        try await disk.onWorkPool { try self.waitForBackgroundWrites() }
    }

    /// The async variant of `flush(durability:)`, run on the bounded work pool.
    public func flush(durability: DiskCache.Durability = .synced) async throws {
        try await disk.onWorkPool { try self.flush(durability: durability) }
    }
}
