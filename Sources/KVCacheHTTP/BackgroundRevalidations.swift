#if HTTP
import Synchronization

/// The revalidations running after a stale response was served (`stale-while-revalidate`):
/// at most one per URL, and a way to wait for them all.
final class BackgroundRevalidations: Sendable {
    private struct State {
        var running: [String: Task<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    /// Runs `work` for `key` unless a revalidation of `key` is already running.
    func start(key: String, _ work: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            guard state.running[key] == nil else { return }
            state.running[key] = Task { [self] in
                await work()
                self.state.withLock { _ = $0.running.removeValue(forKey: key) }
            }
        }
    }

    func waitForAll() async {
        while true {
            let tasks = state.withLock { Array($0.running.values) }
            if tasks.isEmpty { return }
            for task in tasks { await task.value }
        }
    }
}
#endif
