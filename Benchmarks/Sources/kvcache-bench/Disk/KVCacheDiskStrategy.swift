import Foundation
import KVCache

/// KVCache's `DiskCache` in one storage mode, default configuration otherwise.
///
/// `flush()` is `DiskCache.flush(durability: .committed)`: it commits the pending
/// group commit and nothing more, as the floors end a batch with a COMMIT under
/// synchronous=NORMAL. (The default `.synced` flush also checkpoints and fsyncs
/// the WAL, which no baseline does.)
final class KVCacheDiskStrategy: TrimmableDiskStrategy {
    /// `pageSize` nil keeps the configuration's default.
    static func kind(_ mode: DiskCache.StorageMode, pageSize: Int? = nil,
                     flushDurability: DiskCache.Durability = .committed,
                     inOperations: Bool = true) -> DiskStrategyKind {
        DiskStrategyKind(
            name: "KVCache \(mode.rawValue)" + (pageSize.map { " \($0 >> 10)K pages" } ?? "")
                + (flushDurability == .synced ? " synced flush" : ""),
            open: { directory in
                var configuration = DiskCache.Configuration()
                configuration.storageMode = mode
                if let pageSize { configuration.pageSize = pageSize }
                return try KVCacheDiskStrategy(cache: DiskCache(directory: directory, configuration: configuration),
                                               flushDurability: flushDurability)
            },
            inOpenTime: mode != .file && pageSize == nil,
            inOperations: inOperations)
    }

    private let cache: DiskCache
    private let flushDurability: DiskCache.Durability

    init(cache: DiskCache, flushDurability: DiskCache.Durability = .committed) {
        self.cache = cache
        self.flushDurability = flushDurability
    }

    func setValue(_ data: Data, forKey key: String) throws {
        try cache.setValue(data, forKey: key)
    }

    func value(forKey key: String) throws -> Data? {
        try cache.value(forKey: key)
    }

    func flush() throws {
        try cache.flush(durability: flushDurability)
    }

    func trim(toCount count: Int) throws {
        _ = try cache.trim(toCount: count)
    }

    func close() {
        try? cache.close()
    }
}
