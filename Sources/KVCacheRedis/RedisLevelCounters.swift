import Foundation

/// A `RedisLevel`'s counts, which a caller can also wait on (tests wait for an
/// invalidation from another node to have been applied, without sleeping).
final class RedisLevelCounters: @unchecked Sendable {
    private let condition = NSCondition()
    private var statistics = RedisLevel.Statistics()

    func withLock<Result>(_ body: (inout RedisLevel.Statistics) -> Result) -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return body(&statistics)
    }

    /// Waits until `predicate` holds for the counts, for at most `timeout`; returns whether it held.
    func wait(timeout: Duration, until predicate: (RedisLevel.Statistics) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout.seconds)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(statistics) {
            if !condition.wait(until: deadline) { return predicate(statistics) }
        }
        return true
    }
}
