/// The cache directories open in this process. Two stores on one directory in
/// one process would fight over files they each believe they own (this crashed
/// YYCache), so a second open fails with `KVCacheError.directoryInUse`.
/// Other processes are fine: SQLite locking and fresh file names keep them correct.
final class DirectoryRegistry: Sendable {
    static let shared = DirectoryRegistry()

    private let paths = MutexBox<Set<String>>([])

    /// Claims `path` (canonical); `false` if it is already claimed.
    func register(_ path: String) -> Bool {
        paths.withLock { $0.insert(path).inserted }
    }

    func unregister(_ path: String) {
        _ = paths.withLock { $0.remove(path) }
    }
}
