/// The floor: a Swift `Dictionary` behind a pthread mutex, with no eviction
/// and no recency bookkeeping. No cache can do less work per operation.
///
/// With a count limit it still never evicts; in the eviction workload it shows
/// what the inserts alone cost.
final class DictionaryMutexStrategy: MemoryStrategy, @unchecked Sendable {
    static let name = "Dictionary+mutex"
    static let isFloor = true

    private let mutex = PthreadMutex()
    private var storage: [String: SmallValue] = [:]

    init(countLimit: Int?) {}

    func setValue(_ value: SmallValue, forKey key: String) {
        mutex.withLock { storage[key] = value }
    }

    func value(forKey key: String) -> SmallValue? {
        mutex.withLock { storage[key] }
    }
}
