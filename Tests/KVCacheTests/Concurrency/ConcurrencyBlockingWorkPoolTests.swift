import Dispatch
import Foundation
import Testing
@testable import KVCache

/// The async variants' threads (issue 13, item 5): at most a fixed number of jobs
/// run at once however many callers wait, and a call cancelled before its work
/// starts throws `CancellationError` without doing it. Before, each blocked call
/// took a thread of a concurrent `DispatchQueue` and cancellation was ignored.
@Suite struct ConcurrencyBlockingWorkPoolTests {
    /// A bound on how long a step that must happen may take (a failure bound, not a sleep).
    /// Generous: the tasks that start these jobs need a cooperative thread, and on 2 cores
    /// the synchronous suites beside them (child processes, full disks) can hold both for
    /// over 20 s under AddressSanitizer, and for over 60 s while the machine builds.
    static let stuck: DispatchTimeInterval = .seconds(300)

    /// Waits for `semaphore` on a thread of its own: blocking the test's (cooperative)
    /// thread could starve the tasks that are to signal it.
    static func wait(_ semaphore: DispatchSemaphore) async -> DispatchTimeoutResult {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: semaphore.wait(timeout: .now() + stuck)) }.start()
        }
    }

    @Test func noMoreJobsRunAtOnceThanThePoolHasThreads() async throws {
        let pool = BlockingWorkPool(threadCount: 2)
        let peak = MutexBox((now: 0, most: 0))
        let release = DispatchSemaphore(value: 0)
        let bothRunning = DispatchSemaphore(value: 0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await pool.run {
                        let now = peak.withLock { state -> Int in
                            state.now += 1
                            state.most = max(state.most, state.now)
                            return state.now
                        }
                        if now == 2 { bothRunning.signal() }
                        release.wait()
                        peak.withLock { $0.now -= 1 }
                    }
                }
            }
            // Both threads are busy and 18 jobs wait; let them all through.
            #expect(await Self.wait(bothRunning) == .success)
            #expect(pool.runningCount == 2)
            for _ in 0..<20 { release.signal() }
            try await group.waitForAll()
        }
        #expect(peak.withLock { $0.most } == 2)
        #expect(pool.threadsStarted == 2)
    }

    @Test func aJobCancelledBeforeItStartsNeverRuns() async throws {
        let pool = BlockingWorkPool(threadCount: 1)
        let busy = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let ran = MutexBox(false)
        let blocker = Task { try await pool.run { busy.signal(); release.wait() } }
        #expect(await Self.wait(busy) == .success)
        // The only thread is busy: this job waits in the queue, then is cancelled.
        let waiting = Task { try await pool.run { ran.withLock { $0 = true } } }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        release.signal()
        try await blocker.value
        // The pool goes on with later jobs; the cancelled one never ran.
        #expect(try await pool.run { 42 } == 42)
        #expect(!ran.withLock { $0 })
    }

    @Test func aCancelledTasksDiskCallDoesNothing() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await cache.setValue(bytes(10), forKey: "k")
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await cache.value(forKey: "k") == nil)
        try await cache.setValue(bytes(10), forKey: "k")
        #expect(try await cache.value(forKey: "k") == bytes(10))
    }
}
