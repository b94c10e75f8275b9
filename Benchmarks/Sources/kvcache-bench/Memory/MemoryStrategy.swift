/// The 16-byte value every memory strategy stores.
struct SmallValue: Sendable, Equatable {
    var first: UInt64
    var second: UInt64

    init(_ seed: Int) {
        first = UInt64(truncatingIfNeeded: seed)
        second = ~first
    }
}

/// A memory cache under test. One instance is shared by all worker threads.
///
/// A strategy is plugged in by conforming a type and listing it in
/// `MemoryBenchmark.strategies`; the loops are generic over the strategy, so
/// they are specialized and no existential dispatch is timed.
protocol MemoryStrategy: AnyObject, Sendable {
    /// The key type the cache takes; converted from `String` before timing.
    associatedtype Key: Sendable

    /// The label printed in the tables.
    static var name: String { get }
    /// Whether this strategy is the floor the others are compared to.
    static var isFloor: Bool { get }
    /// The largest key count this strategy is run with (nil: the full count).
    static var keyLimit: Int? { get }
    /// Whether a get may run beside a set (false for the ceiling, whose gets take no lock).
    static var allowsWritesBesideReads: Bool { get }

    static func makeKey(_ string: String) -> Key

    /// A cache holding at most `countLimit` entries (nil: unbounded).
    init(countLimit: Int?)

    func setValue(_ value: SmallValue, forKey key: Key)
    func value(forKey key: Key) -> SmallValue?

    /// Empties the cache and waits for any background release, so the next
    /// strategy's heap figure is not skewed by this one's memory being freed.
    /// Not timed.
    func drain()
}

extension MemoryStrategy {
    static var isFloor: Bool { false }
    static var keyLimit: Int? { nil }
    static var allowsWritesBesideReads: Bool { true }
    func drain() {}
}

extension MemoryStrategy where Key == String {
    static func makeKey(_ string: String) -> String { string }
}
