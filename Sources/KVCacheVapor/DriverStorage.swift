#if Vapor
import Foundation
import KVCache
import Synchronization
import Vapor

/// One application's KVCache, shared by every driver value `app.cache` and `req.cache` make,
/// and what the drivers need beside it. Created once per `app.caches.use(.kvcache(...))`.
final class DriverStorage: Sendable {
    /// The open cache, or why it did not open (every operation then fails with that error,
    /// and so does the application's boot).
    let opened: Result<KVCache.Cache<Data>, any Error>
    let coder: any KVCacheValueCoder
    let diskWrite: KVCache.Cache<Data>.DiskWrite
    /// Whether shutdown closes the cache (false for a cache the application was lent).
    let closesOnShutdown: Bool
    /// Set by the first shutdown: the cache is flushed and closed once.
    private let isShutDown = Mutex(false)

    init(opened: Result<KVCache.Cache<Data>, any Error>, coder: any KVCacheValueCoder,
         diskWrite: KVCache.Cache<Data>.DiskWrite, closesOnShutdown: Bool) {
        self.opened = opened
        self.coder = coder
        self.diskWrite = diskWrite
        self.closesOnShutdown = closesOnShutdown
    }

    /// The cache, or the error that kept it from opening.
    func cache() throws -> KVCache.Cache<Data> {
        try opened.get()
    }

    /// Flushes (synced) and, when owned, closes the cache, once; failures are logged, as
    /// Vapor's shutdown has no caller to throw to. The flush runs on the cache's work pool.
    func shutdown(logger: Logger) async {
        guard let cache = claimShutdown() else { return }
        do {
            try await cache.flush()
        } catch {
            logger.error("KVCache: the flush at shutdown failed", metadata: ["error": "\(error)"])
        }
        close(cache, logger: logger)
    }

    /// `shutdown(logger:)` for Vapor's synchronous `app.shutdown()`, on the caller's thread.
    func shutdownBlocking(logger: Logger) {
        guard let cache = claimShutdown() else { return }
        do {
            try cache.flush()
        } catch {
            logger.error("KVCache: the flush at shutdown failed", metadata: ["error": "\(error)"])
        }
        close(cache, logger: logger)
    }

    /// Closes `cache` after its flush at shutdown, unless the user keeps it open.
    private func close(_ cache: KVCache.Cache<Data>, logger: Logger) {
        guard closesOnShutdown else { return }
        // After the flush, closing has no background write left to wait for.
        do {
            try cache.close()
        } catch {
            logger.error("KVCache: closing at shutdown failed", metadata: ["error": "\(error)"])
        }
    }

    /// The open cache if no shutdown has claimed it yet.
    private func claimShutdown() -> KVCache.Cache<Data>? {
        let first = isShutDown.withLock { isShutDown in
            defer { isShutDown = true }
            return !isShutDown
        }
        guard first, case .success(let cache) = opened else { return nil }
        return cache
    }
}
#endif
