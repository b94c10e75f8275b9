#if ServiceLifecycle
import ServiceLifecycle

/// Package trait `ServiceLifecycle`: a cache runs in a `ServiceGroup` until graceful
/// shutdown, then lands its background writes, flushes (synced) and closes.
extension Cache: Service {
    /// Waits for graceful shutdown, then flushes and closes the cache. Cancelled
    /// without a graceful shutdown, it still closes (writes not yet committed are
    /// committed by `close()`).
    public func run() async throws {
        do {
            try await gracefulShutdown()
        } catch is CancellationError {
            try close()
            return
        }
        var failure: (any Error)?
        do { try await flush() } catch { failure = error }
        do { try close() } catch { failure = failure ?? error }
        if let failure { throw failure }
    }
}

/// Package trait `ServiceLifecycle`: the monitor watches memory pressure while its
/// service runs, and stops on graceful shutdown or cancellation.
extension MemoryPressureMonitor: Service {
    /// Starts watching, then waits for graceful shutdown or cancellation and stops. Throws
    /// ``start()``'s errors.
    public func run() async throws {
        try start()
        defer { stop() }
        try? await gracefulShutdown()
    }
}
#endif
