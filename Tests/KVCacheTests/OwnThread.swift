import Foundation
import Synchronization
import Testing

/// Runs each test of a suite on a thread of its own instead of one of Swift's cooperative
/// pool, which has one thread per core: 2 here.
///
/// For suites whose tests block for seconds (waiting for child processes, filling a disk,
/// long replays, above all under AddressSanitizer): on the pool they hold a thread that the
/// async suites beside them need, and those exceed their time limits without being slow.
/// The test keeps its task, so `#expect` and task-locals work as anywhere else.
struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    /// Tests that block run at most this many at a time, as they did on the pool: all at once,
    /// they would take the cores from the timing-sensitive suites beside them.
    let limit: ConcurrencyLimit?

    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        await limit?.acquire()
        defer { limit?.release() }
        let thread = ThreadExecutor()
        defer { thread.finish() }
        try await withTaskExecutorPreference(thread) { try await function() }
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Each test runs on a thread of its own, off the cooperative pool.
    static var onItsOwnThread: Self { Self(limit: nil) }

    /// Each test runs on a thread of its own, and at most as many such tests as there are
    /// cores run at once: for tests that block or compute for seconds.
    static var blockingOnItsOwnThread: Self { Self(limit: .blockingTests) }
}

/// An async counting semaphore: a waiter suspends, holding no thread.
final class ConcurrencyLimit: Sendable {
    static let blockingTests = ConcurrencyLimit(ProcessInfo.processInfo.activeProcessorCount)

    private struct State {
        var available: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(_ count: Int) {
        state = Mutex(State(available: max(1, count)))
    }

    func acquire() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state in
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                state.waiters.append(waiter)
                return false
            }
            if admitted { waiter.resume() }
        }
    }

    /// Slots free now (for tests).
    var available: Int { state.withLock { $0.available } }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}

/// A task executor that runs its jobs, in order, on one thread it starts.
///
/// After `finish()` the thread ends once it has no job left; a job enqueued later (by a
/// task the test left running, which inherits the preference) starts a thread again.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var isFinished = false
    private var isRunning = false

    init() {
        condition.lock()
        startLocked()
        condition.unlock()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        if !isRunning { startLocked() }
        condition.signal()
        condition.unlock()
    }

    func finish() {
        condition.lock()
        isFinished = true
        condition.signal()
        condition.unlock()
    }

    private func startLocked() {
        isRunning = true
        Thread.detachNewThread { [self] in run() }
    }

    /// True on a thread that a `ThreadExecutor` started.
    static var isCurrentThreadOne: Bool { Thread.current.threadDictionary[marker] != nil }
    private static let marker = "KVCacheTests.ThreadExecutor"

    private func run() {
        Thread.current.threadDictionary[Self.marker] = true
        while true {
            condition.lock()
            while jobs.isEmpty && !isFinished { condition.wait() }
            if jobs.isEmpty {
                isRunning = false
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
