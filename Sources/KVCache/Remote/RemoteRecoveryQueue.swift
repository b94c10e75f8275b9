import Dispatch
import Foundation

/// A cache's remote writes, removals and touches that failed because the remote level could
/// not be reached, replayed in the order they were made once it answers again (FusionCache's
/// auto-recovery). While it holds anything, the cache's new remote operations join it
/// instead of being sent, so nothing this node sends overtakes what it sent before.
///
/// Per key only the latest operation is kept (an older one is dropped, counted as
/// superseded), and so is a change another node published for the key after it was queued
/// (that change is newer). A removal by prefix supersedes the queued operations of its keys.
/// Bounded by `maxEntries` and `maxBytes`: beyond them the oldest are dropped (counted,
/// logged). A set keeps its encoded bytes (shared with the caller's `Data` when the coder
/// passes them through); one larger than `maxBytes` is queued as a removal of the key, so
/// other nodes miss rather than read the older value.
final class RemoteRecoveryQueue: @unchecked Sendable {
    private struct Item {
        var operation: RemoteOperation
        var size: Int
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var items: [UInt64: Item] = [:]
    /// Sequence numbers in queue order; those no longer in `items` are skipped.
    private var order: [UInt64] = []
    private var head = 0
    private var latest: [ByteWiseKey: UInt64] = [:]
    private var inFlight: UInt64?
    private var nextSequence: UInt64 = 0
    private var bytes = 0
    private var statistics = RemoteRecovery.Statistics()
    private var drainDue: Double?
    /// The counts when the queue last went from empty to not (for the log line once drained).
    private var outageStart: RemoteRecovery.Statistics?
    private var isClosed = false

    let configuration: RemoteRecovery
    private let queue = DispatchQueue(label: "KVCache.Cache.remoteRecovery", qos: .utility)
    /// Runs an operation on the remote level.
    private let perform: @Sendable (RemoteOperation) throws -> Void
    /// Checks past the level's circuit breaker whether it answers, closing the breaker if so
    /// (`RemoteLevel.probe`).
    private let probe: @Sendable () throws -> Void
    private let diagnostics: Diagnostics
    private let path: String

    init(configuration: RemoteRecovery, diagnostics: Diagnostics, path: String,
         probe: @escaping @Sendable () throws -> Void = {},
         perform: @escaping @Sendable (RemoteOperation) throws -> Void) {
        self.configuration = configuration
        self.diagnostics = diagnostics
        self.path = path
        self.probe = probe
        self.perform = perform
    }

    /// Counts so far, with the queue's size now.
    var counts: RemoteRecovery.Statistics {
        condition.withLock {
            var counts = statistics
            counts.pending = items.count
            counts.pendingBytes = bytes
            return counts
        }
    }

    /// Queues `operation` if the queue holds anything (a live operation must not overtake
    /// queued ones); returns whether it did.
    func appendIfRecovering(_ operation: RemoteOperation) -> Bool {
        condition.withLock {
            guard !items.isEmpty || inFlight != nil, !isClosed else { return false }
            append(operation)
            return true
        }
    }

    /// Queues `operation`, which failed with a retryable error, and schedules a drain.
    func appendFailed(_ operation: RemoteOperation) {
        let first = condition.withLock { () -> Bool in
            guard !isClosed else { return false }
            let wasEmpty = items.isEmpty && inFlight == nil
            if wasEmpty, outageStart == nil { outageStart = statistics }
            append(operation)
            return wasEmpty
        }
        if first {
            diagnostics.notice("the remote level could not be reached; its writes are queued and will be replayed "
                               + "when it answers (at most \(configuration.maxEntries) operations, \(configuration.maxBytes) bytes)",
                               path: path)
        }
    }

    /// A change another node published for `key` (newer than anything queued for it):
    /// the queued operation for it goes (one being sent is not sent again).
    func dropQueued(forKey key: String) {
        condition.withLock {
            guard let sequence = latest[ByteWiseKey(key)] else { return }
            remove(sequence)
            statistics.supersededByOtherNodes += 1
            condition.broadcast()
        }
    }

    /// A removal by `prefix` another node published: the queued operations of its keys go.
    func dropQueued(withPrefix prefix: String) {
        condition.withLock {
            let dropped = supersede(prefix: prefix)
            statistics.supersededByOtherNodes += dropped
            if dropped > 0 { condition.broadcast() }
        }
    }

    /// Drains now (the level answered: a subscription was made, a call succeeded).
    func drainSoon() {
        scheduleDrain(after: 0)
    }

    /// Blocks until the queue is empty (every operation replayed, superseded or dropped),
    /// for at most `timeout`; returns whether it is.
    func waitUntilEmpty(timeout: Duration) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout.seconds)
        return condition.withLock {
            while !items.isEmpty || inFlight != nil {
                if !condition.wait(until: deadline) { return items.isEmpty && inFlight == nil }
            }
            return true
        }
    }

    var isEmpty: Bool { condition.withLock { items.isEmpty && inFlight == nil } }

    /// Stops draining; what is queued is dropped (and logged).
    func close() {
        let dropped = condition.withLock { () -> Int in
            isClosed = true
            let count = items.count
            items.removeAll()
            order.removeAll()
            head = 0
            latest.removeAll()
            bytes = 0
            statistics.droppedAtClose += count
            condition.broadcast()
            return count
        }
        if dropped > 0 {
            diagnostics.notice("closed with \(dropped) remote operations not replayed", path: path)
        }
    }

    // MARK: - Queueing (under `condition`)

    private func append(_ operation: RemoteOperation) {
        var operation = operation
        if case .set(let key, _) = operation, operation.size > configuration.maxBytes {
            // Too large to keep: other nodes must at least stop reading the older value.
            operation = .remove(key: key)
        }
        if let key = operation.key {
            let byteWise = ByteWiseKey(key)
            // One being sent may be superseded too: the drain sends the new one after it.
            if let sequence = latest[byteWise], let queued = items[sequence] {
                switch (operation, queued.operation) {
                case (.touch(_, let expiration), .set(_, var entry)) where sequence != inFlight:
                    // The queued value takes the new expiration.
                    entry.expiration = expiration
                    items[sequence]?.operation = .set(key: key, entry: entry)
                    return
                case (.touch, .remove):
                    return  // nothing to touch once the removal is replayed
                case (.touch, .set):
                    break  // being sent with the old expiration: the touch follows it
                default:
                    remove(sequence)
                    statistics.superseded += 1
                }
            }
            latest[byteWise] = nextSequence
        } else if case .removePrefix(let prefix) = operation {
            statistics.superseded += supersede(prefix: prefix)
        }
        let size = operation.size
        items[nextSequence] = Item(operation: operation, size: size)
        order.append(nextSequence)
        nextSequence &+= 1
        bytes += size
        statistics.queued += 1
        statistics.largestPending = max(statistics.largestPending, items.count)
        dropOldestOverBounds()
        if drainDue == nil { scheduleDrainLocked(after: configuration.retryInterval.seconds) }
    }

    /// Removes the queued operations of keys with `prefix`, and
    /// removals by a longer prefix; returns how many.
    private func supersede(prefix: String) -> Int {
        let bytesOfPrefix = Array(prefix.utf8)
        var dropped = 0
        for (sequence, item) in items {
            let covered: Bool
            switch item.operation {
            case .removePrefix(let other): covered = other.utf8.starts(with: bytesOfPrefix)
            default: covered = item.operation.key.map { $0.utf8.starts(with: bytesOfPrefix) } ?? false
            }
            if covered {
                remove(sequence)
                dropped += 1
            }
        }
        return dropped
    }

    private func remove(_ sequence: UInt64) {
        guard let item = items.removeValue(forKey: sequence) else { return }
        bytes -= item.size
        if let key = item.operation.key, latest[ByteWiseKey(key)] == sequence { latest[ByteWiseKey(key)] = nil }
        if items.isEmpty {
            order.removeAll(keepingCapacity: true)
            head = 0
        }
    }

    private func dropOldestOverBounds() {
        var dropped = 0
        while items.count > configuration.maxEntries || bytes > configuration.maxBytes {
            guard let oldest = oldest() else { break }
            remove(oldest)
            dropped += 1
        }
        guard dropped > 0 else { return }
        statistics.overflowDrops += dropped
        diagnostics.failed("the remote recovery queue is full (\(configuration.maxEntries) operations, "
                           + "\(configuration.maxBytes) bytes):", RemoteLevelError(.unavailable,
                           "\(dropped) oldest queued operations dropped; other nodes may keep older values of those keys until they expire"),
                           path: path)
    }

    private func oldest() -> UInt64? {
        var index = head
        while index < order.count {
            let sequence = order[index]
            if items[sequence] != nil { return sequence }
            index += 1
        }
        return nil
    }

    /// The first queued operation, marked in flight.
    private func takeNext() -> (UInt64, RemoteOperation)? {
        condition.withLock {
            while head < order.count, items[order[head]] == nil { head += 1 }
            if head > 1024, head * 2 > order.count {
                order.removeFirst(head)
                head = 0
            }
            guard !isClosed, head < order.count, let item = items[order[head]] else { return nil }
            inFlight = order[head]
            return (order[head], item.operation)
        }
    }

    // MARK: - Draining

    /// Once the queue is empty after an outage: one log line saying what became of it.
    private func reportIfDrained() {
        let summary = condition.withLock { () -> String? in
            guard items.isEmpty, inFlight == nil, let start = outageStart else { return nil }
            outageStart = nil
            let now = statistics
            return "the remote level answers again; of the operations queued meanwhile, \(now.replayed - start.replayed) were "
                + "replayed, \(now.superseded - start.superseded) superseded by this node's later ones, "
                + "\(now.supersededByOtherNodes - start.supersededByOtherNodes) by other nodes' changes, "
                + "\(now.overflowDrops - start.overflowDrops) dropped for a full queue, \(now.discarded - start.discarded) discarded"
        }
        if let summary { diagnostics.notice(summary, path: path) }
    }

    private func scheduleDrain(after delay: Double) {
        condition.withLock { scheduleDrainLocked(after: delay) }
    }

    /// Schedules a drain `delay` seconds from now unless one is due sooner.
    private func scheduleDrainLocked(after delay: Double) {
        guard !isClosed, !items.isEmpty else { return }
        let due = Condition.now() + delay
        if let drainDue, drainDue <= due { return }
        drainDue = due
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in self?.drain() }
    }

    /// Sends the queued operations in order until the queue is empty or one fails; after a
    /// failure the next attempt is `retryInterval` later. When the level's circuit breaker
    /// refuses an operation, a probe (once a drain) asks the level past it: the server may be
    /// back long before the break ends, and if it answers the operation is sent again at once.
    private func drain() {
        condition.withLock { drainDue = nil }
        defer { reportIfDrained() }
        var probed = false
        while let (sequence, operation) = takeNext() {
            let outcome: Result<Void, any Error> = Result { try perform(operation) }
            if !probed, case .failure(let error as RemoteLevelError) = outcome, error.code == .circuitOpen {
                probed = true
                // Not being sent while the probe waits: a touch of its key may still retime it.
                condition.withLock {
                    inFlight = nil
                    condition.broadcast()
                }
                if (try? probe()) != nil { continue }
            }
            let retry = condition.withLock { () -> Bool in
                inFlight = nil
                defer { condition.broadcast() }
                switch outcome {
                case .success:
                    // Unless superseded or dropped while it was sent (counted then).
                    if items[sequence] != nil {
                        remove(sequence)
                        statistics.replayed += 1
                    }
                    return false
                case .failure(let error) where RemoteOperation.isRetryable(error):
                    statistics.failedAttempts += 1
                    return true
                case .failure:
                    if items[sequence] != nil {
                        remove(sequence)
                        statistics.discarded += 1
                    }
                    return false
                }
            }
            if case .failure(let error) = outcome, !retry {
                diagnostics.failed("replaying the queued remote operation (\(operation.description)); it is dropped,",
                                   error, path: path)
            }
            if retry {
                scheduleDrain(after: configuration.retryInterval.seconds)
                return
            }
        }
    }
}
