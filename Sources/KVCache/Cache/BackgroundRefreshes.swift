/// The background refreshes of a cache (`value(forKey:expiration:refreshAfter:...)`):
/// at most one per key at a time, each a task that can be awaited.
final class BackgroundRefreshes: Sendable {
    private struct State {
        var keys: Set<ByteWiseKey> = []
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var lastID: UInt64 = 0
    }

    private let state = MutexBox(State())

    /// Starts `work` for `key` unless a refresh of `key` is running; returns whether it started.
    @discardableResult
    func start(_ key: ByteWiseKey, _ work: @escaping @Sendable () async -> Void) -> Bool {
        state.withLock { state in
            guard state.keys.insert(key).inserted else { return false }
            state.lastID &+= 1
            let id = state.lastID
            // Stored under the lock, so the task's own removal below always finds it.
            state.tasks[id] = Task {
                await work()
                self.state.withLock { state in
                    state.keys.remove(key)
                    state.tasks[id] = nil
                }
            }
            return true
        }
    }

    /// Waits until every refresh started so far, and any they start, has finished.
    func waitForAll() async {
        while true {
            let tasks = state.withLock { Array($0.tasks.values) }
            if tasks.isEmpty { return }
            for task in tasks { await task.value }
        }
    }
}
