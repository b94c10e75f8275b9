import Dispatch
import Synchronization
import Testing
@testable import KVCache

// The limit catches a hang. On its own thread, a test's jobs do not queue behind the tests
// that hold the cooperative pool's threads (2 here); the unstructured tasks it starts still do.
@Suite(.onItsOwnThread, .timeLimit(.minutes(5)))
struct ConcurrencyBackgroundThreadTests {
    /// Jobs appended from any thread, in the order they ran.
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    @Test func jobsRunOneAtATimeInTheOrderTheyWereQueued() {
        let thread = BackgroundThread()
        let log = Log()
        let running = Mutex(0)
        for index in 0..<200 {
            thread.async {
                let overlapping = running.withLock { count -> Bool in
                    count += 1
                    return count > 1
                }
                log.append(overlapping ? "overlap" : "\(index)")
                running.withLock { $0 -= 1 }
            }
        }
        thread.waitUntilIdle()
        #expect(log.all == (0..<200).map(String.init))
    }

    @Test func delayedJobsRunAfterTheirDelayInDeadlineOrder() {
        let thread = BackgroundThread()
        let log = Log()
        let start = Condition.now()
        thread.asyncAfter(seconds: 0.03) { log.append("late") }
        thread.asyncAfter(seconds: 0.01) { log.append("early") }
        thread.async { log.append("now") }
        thread.waitUntilIdle()
        #expect(log.all == ["now", "early", "late"])
        #expect(Condition.now() - start >= 0.03)
    }

    @Test func waitingUntilIdleIncludesJobsThatJobsSchedule() {
        let thread = BackgroundThread()
        let log = Log()
        thread.asyncAfter(seconds: 0.005) {
            log.append("first")
            thread.asyncAfter(seconds: 0.005) { log.append("second") }
        }
        thread.waitUntilIdle()
        #expect(log.all == ["first", "second"])
    }

    @Test func releasingTheThreadStillRunsEveryQueuedJob() {
        let log = Log()
        let ran = DispatchSemaphoreBox()
        do {
            let thread = BackgroundThread()
            thread.asyncAfter(seconds: 3600) {
                log.append("delayed")
                ran.signal()
            }
            thread.async { log.append("due") }
        }
        ran.wait()
        #expect(log.all == ["due", "delayed"])
    }
}

/// A semaphore usable from @Sendable closures.
final class DispatchSemaphoreBox: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func signal() { semaphore.signal() }
    func wait() { semaphore.wait() }
}
