import Synchronization
import Testing
@testable import KVCache

// The limit catches a hang. On its own thread, a test's jobs do not queue behind the tests
// that hold the cooperative pool's threads (2 here); the unstructured tasks it starts still do.
@Suite(.onItsOwnThread, .timeLimit(.minutes(5)))
struct ConcurrencySingleFlightTests {
    struct ComputeFailed: Error, Equatable {}

    /// A SingleFlight whose joins are reported on `joins`, with the number waiting.
    private static func makeFlight() -> (SingleFlight<String, Int>, AsyncStream<Int>) {
        let (joins, joined) = AsyncStream<Int>.makeStream()
        return (SingleFlight(didJoin: { _, count in joined.yield(count) }), joins)
    }

    private static func waitUntil(_ count: Int, haveJoined joins: AsyncStream<Int>) async {
        for await joined in joins where joined == count { return }
    }

    @Test func concurrentMissesForOneKeyComputeOnceAndShareTheValue() async throws {
        let (flight, joins) = Self.makeFlight()
        let computations = Counter()
        let gate = Gate()

        let values = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    try await flight.value(forKey: "k") {
                        computations.increment()
                        await gate.wait()
                        return 42
                    }
                }
            }
            await Self.waitUntil(100, haveJoined: joins)
            gate.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }

        #expect(values == Array(repeating: 42, count: 100))
        #expect(computations.value == 1)
        #expect(flight.inFlightCount == 0)
    }

    @Test func anErrorReachesEveryWaiterAndIsNotCached() async throws {
        let (flight, joins) = Self.makeFlight()
        let computations = Counter()
        let gate = Gate()

        let outcomes = await withTaskGroup(of: Result<Int, any Error>.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    await Result {
                        try await flight.value(forKey: "k") {
                            computations.increment()
                            await gate.wait()
                            throw ComputeFailed()
                        }
                    }
                }
            }
            await Self.waitUntil(100, haveJoined: joins)
            gate.open()
            return await group.reduce(into: []) { $0.append($1) }
        }

        #expect(outcomes.count == 100)
        #expect(outcomes.allSatisfy { ($0.failure as? ComputeFailed) == ComputeFailed() })
        #expect(computations.value == 1)

        let retried = try await flight.value(forKey: "k") {
            computations.increment()
            return 7
        }
        #expect(retried == 7)
        #expect(computations.value == 2)
    }

    @Test func cancellingOneWaiterLeavesTheOthersAndTheComputationRunning() async throws {
        let (flight, joins) = Self.makeFlight()
        let computations = Counter()
        let gate = Gate()
        @Sendable func compute() async -> Int {
            computations.increment()
            await gate.wait()
            return Task.isCancelled ? -1 : 42
        }

        let cancelled = Task { try await flight.value(forKey: "k", compute: compute) }
        let kept = Task { try await flight.value(forKey: "k", compute: compute) }
        await Self.waitUntil(2, haveJoined: joins)

        cancelled.cancel()
        // The gate is still shut, so this returns before the computation ends.
        await #expect(throws: CancellationError.self) { try await cancelled.value }

        gate.open()
        #expect(try await kept.value == 42)
        #expect(computations.value == 1)
    }

    @Test func cancellingEveryWaiterCancelsTheComputation() async throws {
        let (flight, joins) = Self.makeFlight()
        let gate = Gate()
        let (ends, ended) = AsyncStream<Bool>.makeStream()

        let waiters = (0..<2).map { _ in
            Task {
                try await flight.value(forKey: "k") {
                    await gate.wait()
                    ended.yield(Task.isCancelled)
                    return 1
                }
            }
        }
        await Self.waitUntil(2, haveJoined: joins)
        for waiter in waiters { waiter.cancel() }

        for waiter in waiters {
            await #expect(throws: CancellationError.self) { try await waiter.value }
        }
        var endings = ends.makeAsyncIterator()
        #expect(await endings.next() == true, "the computation saw its cancellation")
        #expect(flight.inFlightCount == 0)
        #expect(try await flight.value(forKey: "k") { 2 } == 2, "the next call starts afresh")
    }

    @Test func aCallerCancelledBeforeAskingGetsCancellationErrorAndComputesNothing() async {
        let flight = SingleFlight<String, Int>()
        let computations = Counter()

        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await flight.value(forKey: "k") {
                computations.increment()
                return 1
            }
        }

        await #expect(throws: CancellationError.self) { try await caller.value }
        #expect(computations.value == 0)
        #expect(flight.inFlightCount == 0)
    }

    @Test func differentKeysComputeIndependently() async throws {
        let (flight, joins) = Self.makeFlight()
        let gate = Gate()

        let slow = Task {
            try await flight.value(forKey: "slow") {
                await gate.wait()
                return 1
            }
        }
        await Self.waitUntil(1, haveJoined: joins)

        // Finishes while "slow" is still computing: keys do not wait for each other.
        #expect(try await flight.value(forKey: "fast") { 2 } == 2)
        #expect(flight.inFlightCount == 1)

        gate.open()
        #expect(try await slow.value == 1)
    }

    @Test func aCallAfterTheComputationEndedStartsANewOne() async throws {
        let flight = SingleFlight<String, Int>()
        let computations = Counter()
        @Sendable func compute() -> Int {
            computations.increment()
            return computations.value
        }

        #expect(try await flight.value(forKey: "k", compute: compute) == 1)
        #expect(try await flight.value(forKey: "k", compute: compute) == 2)
    }
}

private extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }

    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// A one-shot barrier for tests: `wait()` suspends until `open()` is called or
/// the waiting task is cancelled. Lets tests order events without sleeping.
private final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var lastID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when the gate opens or the calling task is cancelled.
    func wait() async {
        let id = state.withLock { state in
            state.lastID += 1
            return state.lastID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let passes = state.withLock { state in
                    if state.isOpen || Task.isCancelled { return true }
                    state.waiters[id] = waiter
                    return false
                }
                if passes { waiter.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

/// A thread-safe counter for tests.
private final class Counter: Sendable {
    private let count = Mutex(0)

    var value: Int { count.withLock { $0 } }

    func increment() { count.withLock { $0 += 1 } }
}
