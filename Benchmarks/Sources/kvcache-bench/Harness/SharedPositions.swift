import Synchronization

/// Positions `0..<count` handed out in chunks to whichever worker asks next, so that
/// a worker the machine slows down (its core taken by another tenant for a while)
/// does fewer of them, instead of the whole batch waiting for it to finish a fixed
/// share while the others idle: the batch's wall time then measures the throughput
/// of all workers together.
final class SharedPositions: Sendable {
    /// Positions per claim: ~tens of microseconds of gets, so the shared counter's
    /// line moves between cores once per chunk, not once per operation.
    static let chunk = 256

    let count: Int
    let chunk: Int
    private let next = Atomic<Int>(0)

    init(count: Int, chunk: Int = SharedPositions.chunk) {
        self.count = count
        self.chunk = chunk
    }

    /// The next chunk, or nil once every position has been handed out.
    func claim() -> Range<Int>? {
        let lower = next.add(chunk, ordering: .relaxed).oldValue
        guard lower < count else { return nil }
        return lower..<min(lower + chunk, count)
    }
}
