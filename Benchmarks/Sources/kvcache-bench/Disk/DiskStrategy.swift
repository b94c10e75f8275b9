import Foundation

/// A disk store under test, opened on its own directory. Used from one thread.
protocol DiskStrategy: AnyObject {
    func setValue(_ data: Data, forKey key: String) throws
    func value(forKey key: String) throws -> Data?
    /// Commits whatever a strategy batches; timed as part of the set batch.
    func flush() throws
    func close()
}

/// A store that can drop its oldest entries, for the trim benchmark.
protocol TrimmableDiskStrategy: DiskStrategy {
    func trim(toCount count: Int) throws
}

/// How to open one strategy; the list in `DiskBenchmark.strategies` decides
/// what is compared. A KVCache mode plugs in with one more entry.
struct DiskStrategyKind: Sendable {
    var name: String
    var isFloor: Bool = false
    var open: @Sendable (URL) throws -> any DiskStrategy
    /// Fills a fresh directory with `count` entries of `value` faster than one
    /// set at a time (nil: set and flush through `open`). Used by the open-time
    /// benchmark, where only the layout on disk matters.
    var populate: (@Sendable (URL, Int, Data) throws -> Void)?
    /// Whether the open-time benchmark includes this strategy: file-per-key
    /// stores open nothing (they find files by name), and filling a million
    /// files would dominate the whole run.
    var inOpenTime = true
    /// Whether the set/get benchmark includes it (a variant that differs only in
    /// how it trims does not).
    var inOperations = true
    /// Operations per set/get batch at most, by value size, for a store whose every
    /// operation costs in proportion to its size (URLCache); nil: the run's count.
    var batchLimit: (@Sendable (_ valueSize: Int) -> Int)?
    /// Said under each table where the strategy ran fewer operations than the others.
    var note: String?
}
