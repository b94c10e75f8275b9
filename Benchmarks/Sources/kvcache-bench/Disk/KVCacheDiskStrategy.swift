import Foundation
import KVCache

/// KVCache's `DiskCache` in one storage mode, default configuration otherwise.
///
/// `flush()` is KVCache's own: it commits the pending group commit, then
/// checkpoints and fsyncs the WAL. The baselines never fsync, so the set
/// figures carry one fsync per batch against KVCache.
final class KVCacheDiskStrategy: TrimmableDiskStrategy {
    /// `pageSize` nil keeps the configuration's default.
    static func kind(_ mode: DiskCache.StorageMode, pageSize: Int? = nil) -> DiskStrategyKind {
        DiskStrategyKind(
            name: "KVCache \(mode.rawValue)" + (pageSize.map { " \($0 >> 10)K pages" } ?? ""),
            open: { directory in
                var configuration = DiskCache.Configuration()
                configuration.storageMode = mode
                if let pageSize { configuration.pageSize = pageSize }
                return try KVCacheDiskStrategy(cache: DiskCache(directory: directory, configuration: configuration))
            },
            inOpenTime: mode != .file)
    }

    private let cache: DiskCache

    init(cache: DiskCache) {
        self.cache = cache
    }

    func setValue(_ data: Data, forKey key: String) throws {
        try cache.setValue(data, forKey: key)
    }

    func value(forKey key: String) throws -> Data? {
        try cache.value(forKey: key)
    }

    func flush() throws {
        try cache.flush()
    }

    func trim(toCount count: Int) throws {
        _ = try cache.trim(toCount: count)
    }

    func close() {
        cache.close()
    }
}
