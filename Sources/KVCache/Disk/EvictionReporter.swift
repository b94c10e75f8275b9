import Dispatch

/// Reports the entries a store removed to `DiskCache.Configuration.onEviction`: each
/// commit's list, once it has landed, in order, on a serial queue of its own (never
/// under the cache's locks).
final class EvictionReporter: Sendable {
    private let callback: @Sendable (String, EvictionReason) -> Void
    private let queue = DispatchQueue(label: "KVCache.DiskCache.evictions")

    init(_ callback: @escaping @Sendable (String, EvictionReason) -> Void) {
        self.callback = callback
    }

    func report(_ evictions: [Eviction]) {
        guard !evictions.isEmpty else { return }
        let callback = callback
        queue.async { for eviction in evictions { callback(eviction.key, eviction.reason) } }
    }

    /// Blocks until the reports made so far have been delivered.
    func waitForReports() {
        queue.sync {}
    }
}

/// One entry a commit removed, and why.
struct Eviction: Sendable, Equatable {
    var key: String
    var reason: EvictionReason
}
