/// The scaling ceiling: a Swift `Dictionary` whose sets take a mutex and whose gets
/// take nothing, so two threads' gets share no written memory at all.
///
/// Sound only because the benchmark never runs a get beside a set (each workload
/// finishes before the next starts); no cache could read this way. Its 2 threads ÷
/// 1 thread throughput is what the machine allows a lookup in the same minutes.
final class UnlockedReadsStrategy: MemoryStrategy, @unchecked Sendable {
    static let name = "Dictionary, unlocked reads (ceiling)"
    static let allowsWritesBesideReads = false

    private let mutex = PthreadMutex()
    @exclusivity(unchecked) private var storage: [String: SmallValue] = [:]

    init(countLimit: Int?) {}

    func setValue(_ value: SmallValue, forKey key: String) {
        mutex.withLock { storage[key] = value }
    }

    func value(forKey key: String) -> SmallValue? {
        storage[key]
    }
}
