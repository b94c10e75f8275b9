#if Vapor
import Foundation
import KVCache
import Vapor

extension Application.Caches.Provider {
    /// A KVCache driver: memory in front of a disk level in `directory` (and a remote level,
    /// if `configuration.remote` is set), bounded by `configuration`'s limits and kept across
    /// restarts. The cache opens here, once per `app.caches.use(.kvcache(...))`, and is
    /// flushed and closed when the application shuts down.
    ///
    /// If the cache cannot open (a directory it cannot create, one another cache in this
    /// process has open, an invalid limit), the application's boot throws that
    /// `KVCacheError`, and so does every cache operation.
    ///
    /// - Parameters:
    ///   - directory: The disk level's directory; processes that share it share the values.
    ///   - configuration: The levels' limits (`memory.countLimit`, `disk.sizeLimit`, ...).
    ///   - coder: How values become bytes. Default: JSON.
    ///   - diskWrite: `.immediate` (default): a `set` completes once its value is on disk;
    ///     `.background`: once it is in memory, the disk write following.
    public static func kvcache(
        directory: URL,
        configuration: KVCache.Cache<Data>.Configuration = .init(),
        coder: some KVCacheValueCoder = .json,
        diskWrite: KVCache.Cache<Data>.DiskWrite = .immediate
    ) -> Self {
        .init { app in
            // The storage it replaces closes first: it may have the same directory open.
            app.caches.retireKVCache()
            let opened = Result { try KVCache.Cache<Data>(directory: directory, configuration: configuration) }
            app.caches.useKVCache(DriverStorage(opened: opened, coder: coder, diskWrite: diskWrite,
                                                closesOnShutdown: true))
        }
    }

    /// A KVCache driver over `cache`, which the application flushes at shutdown and, if
    /// `closesOnShutdown`, closes.
    ///
    /// - Parameters:
    ///   - cache: An open cache of bytes; its configuration (levels, limits, remote) applies.
    ///   - coder: How values become bytes. Default: JSON.
    ///   - diskWrite: `.immediate` (default) or `.background`, as for `kvcache(directory:...)`.
    ///   - closesOnShutdown: Whether the application's shutdown closes `cache`. Default true.
    public static func kvcache(
        _ cache: KVCache.Cache<Data>,
        coder: some KVCacheValueCoder = .json,
        diskWrite: KVCache.Cache<Data>.DiskWrite = .immediate,
        closesOnShutdown: Bool = true
    ) -> Self {
        .init { app in
            app.caches.retireKVCache()
            app.caches.useKVCache(DriverStorage(opened: .success(cache), coder: coder, diskWrite: diskWrite,
                                                closesOnShutdown: closesOnShutdown))
        }
    }
}

extension Application.Caches {
    /// The cache behind the KVCache driver set with `app.caches.use(.kvcache(...))`: its
    /// statistics, `flush`, `removeAll`, levels. Nil without that driver, or if it did not open.
    public var kvcache: KVCache.Cache<Data>? {
        try? application.storage[DriverState.Key.self]?.current.withLock { $0 }?.cache()
    }

    /// Makes `storage` the driver `app.cache` uses.
    func useKVCache(_ storage: DriverStorage) {
        _ = DriverState.of(application).replace(with: storage)
        use { app in KVCacheDriver(storage: storage, eventLoop: app.eventLoopGroup.any()) }
    }

    /// Flushes and closes the KVCache driver's cache set before, if any, before another replaces it.
    func retireKVCache() {
        guard let previous = DriverState.of(application).current.withLock({ $0 }) else { return }
        previous.shutdownBlocking(logger: application.logger)
    }
}
#endif
