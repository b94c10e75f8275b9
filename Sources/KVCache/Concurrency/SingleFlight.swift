import Foundation

/// Runs at most one computation per key at a time: callers that ask for a key
/// while its computation runs wait for that computation instead of starting
/// their own, and all of them receive its value or its error.
///
/// Nothing is remembered once a computation ends, successfully or not: the next
/// call for the key starts a new one (by then the caller is expected to find the
/// value in its cache). Errors are not cached.
///
/// Cancellation belongs to each waiter. A cancelled waiter stops waiting at once
/// and gets `CancellationError`; the others keep waiting for the same
/// computation. When the *last* waiter is cancelled, nobody wants the result
/// any more: the computation's task is cancelled and forgotten, so a later call
/// starts afresh rather than joining work that is winding down. (A computation
/// that ignores cancellation still runs to its end; its result goes nowhere.)
final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    typealias Waiter = CheckedContinuation<Value, any Error>

    private struct Flight {
        let id: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: Waiter] = [:]
    }

    // `flights` and `lastID` are guarded by `lock`; continuations are resumed
    // and tasks cancelled only after it is released, so no foreign code runs under it.
    private let lock = PThreadMutex()
    private var flights: [Key: Flight] = [:]
    private var lastID: UInt64 = 0
    private let didJoin: @Sendable (Key, _ waiterCount: Int) -> Void

    /// - Parameter didJoin: called after a caller starts waiting for `key`, with
    ///   the number of callers now waiting; lets tests order events without sleeping.
    init(didJoin: @escaping @Sendable (Key, _ waiterCount: Int) -> Void = { _, _ in }) {
        self.didJoin = didJoin
    }

    /// The number of keys whose computation is running and awaited.
    var inFlightCount: Int { lock.withLock { flights.count } }

    /// Returns the result of the computation running for `key`, starting
    /// `compute` if none is.
    ///
    /// - Throws: the computation's error, or `CancellationError` if the calling
    ///   task is cancelled before the computation ends.
    func value(forKey key: Key, compute: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let waiterID = lock.withLock { nextID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: Waiter) in
                join(key, waiterID: waiterID, waiter: waiter, compute: compute)
            }
        } onCancel: {
            leave(key, waiterID: waiterID)
        }
    }

    private func join(
        _ key: Key, waiterID: UInt64, waiter: Waiter,
        compute: @escaping @Sendable () async throws -> Value
    ) {
        let waiterCount: Int? = lock.withLock {
            // The task's cancelled flag is set before `leave` runs and `leave`
            // takes the lock, so a waiter cancelled before it got here is seen here.
            if Task.isCancelled { return nil }
            if flights[key] == nil {
                let flightID = nextID()
                flights[key] = Flight(id: flightID)
                // Unstructured so it outlives any one waiter; it cannot finish
                // before `task` is stored because `finish` needs the lock we hold.
                flights[key]!.task = Task {
                    let result: Result<Value, any Error>
                    do { result = .success(try await compute()) } catch { result = .failure(error) }
                    self.finish(key, flightID: flightID, with: result)
                }
            }
            flights[key]!.waiters[waiterID] = waiter
            return flights[key]!.waiters.count
        }
        guard let waiterCount else { return waiter.resume(throwing: CancellationError()) }
        didJoin(key, waiterCount)
    }

    private func leave(_ key: Key, waiterID: UInt64) {
        let (waiter, abandonedTask): (Waiter?, Task<Void, Never>?) = lock.withLock {
            guard let waiter = flights[key]?.waiters.removeValue(forKey: waiterID) else { return (nil, nil) }
            guard flights[key]!.waiters.isEmpty else { return (waiter, nil) }
            return (waiter, flights.removeValue(forKey: key)!.task)
        }
        waiter?.resume(throwing: CancellationError())
        abandonedTask?.cancel()
    }

    private func finish(_ key: Key, flightID: UInt64, with result: Result<Value, any Error>) {
        let waiters: [Waiter] = lock.withLock {
            // An abandoned flight was already removed; a newer one may hold the key.
            guard flights[key]?.id == flightID else { return [] }
            return Array(flights.removeValue(forKey: key)!.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    private func nextID() -> UInt64 {
        lastID += 1
        return lastID
    }
}
