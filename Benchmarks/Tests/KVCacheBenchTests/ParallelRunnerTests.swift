import Foundation
import Testing
@testable import kvcache_bench

@Suite struct ParallelRunnerTests {
    /// What the workers saw: each warm-up's thread, and how many warm-ups had finished
    /// when each timed body started.
    final class Log: @unchecked Sendable {
        let mutex = PthreadMutex()
        var warmUpThreads: [Int: pthread_t] = [:]
        var warmUpsSeenByBodies: [Int] = []
    }

    /// Every worker warms up on the thread that then runs its timed body, and no body
    /// starts before every warm-up has finished (the clock starts after them).
    @Test(arguments: [1, 2, 4])
    func warmUpsRunOnTheWorkersThreadsBeforeAnyTimedWork(threads: Int) {
        let log = Log()
        let outcome = ParallelRunner.run(threads: threads, warmUp: { worker in
            log.mutex.withLock { log.warmUpThreads[worker] = pthread_self() }
        }) { worker, _ in
            log.mutex.withLock {
                log.warmUpsSeenByBodies.append(log.warmUpThreads.count)
                return pthread_equal(log.warmUpThreads[worker]!, pthread_self()) != 0 ? 1 : 0
            }
        }
        #expect(outcome.results == Array(repeating: 1, count: threads))
        #expect(log.warmUpsSeenByBodies == Array(repeating: threads, count: threads))
    }
}
