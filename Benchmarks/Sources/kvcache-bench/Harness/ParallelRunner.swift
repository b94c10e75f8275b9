import Dispatch
import Foundation

/// Runs a batch on one or more threads released together and times the whole
/// batch (wall clock), never single operations.
enum ParallelRunner {
    struct Outcome {
        var nanoseconds: UInt64
        /// What each worker returned (e.g. its hit count), for sanity checks.
        var results: [Int]
        var total: Int { results.reduce(0, +) }
        /// Sampled single-operation latencies of all workers.
        var latencies: [UInt64] = []
    }

    /// Calls `body(worker, sampler)` for `worker` in `0..<threads`; the body
    /// times a sample of its operations with its own `sampler`. With one thread
    /// the batch runs on the calling thread, so no thread hop is timed.
    ///
    /// `warmUp(worker)`, if given, runs first on the worker's own thread, untimed:
    /// the clock starts once every worker has finished it.
    static func run(threads: Int, expectedOperations: Int = 0,
                    warmUp: (@Sendable (Int) -> Void)? = nil,
                    _ body: @escaping @Sendable (Int, inout LatencySampler) -> Int) -> Outcome {
        _ = Clock.overhead  // calibrated before any timing
        if threads <= 1 {
            var result = 0
            warmUp?(0)
            var sampler = LatencySampler(expectedOperations: expectedOperations)
            let nanoseconds = Clock.measure { result = body(0, &sampler) }
            return Outcome(nanoseconds: nanoseconds, results: [result], latencies: sampler.latencies)
        }
        let results = ResultBox(count: threads)
        let latencies = LatencyBox()
        let ready = DispatchSemaphore(value: 0)
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        var workers: [JoinableThread] = []
        for worker in 0..<threads {
            done.enter()
            workers.append(JoinableThread(stackSize: 1 << 20) {
                warmUp?(worker)
                ready.signal()
                var sampler = LatencySampler(expectedOperations: expectedOperations / threads)
                start.wait()
                results.set(worker, body(worker, &sampler))
                latencies.append(sampler.latencies)
                done.leave()
            })
        }
        // Every thread exists, has warmed up and waits before the clock starts.
        for _ in 0..<threads { ready.wait() }
        let begin = Clock.now()
        for _ in 0..<threads { start.signal() }
        done.wait()
        let elapsed = Clock.now() - begin
        // The workers' closures (and what they capture, such as per-thread key copies)
        // are released here, on this thread, once every worker has exited: released on a
        // worker as it exits, megabytes were freed while the next workload measured the heap.
        for worker in workers { worker.join() }
        return Outcome(nanoseconds: elapsed, results: results.values, latencies: latencies.values)
    }

    /// The `worker`-th of `parts` contiguous slices of `0..<count`.
    static func slice(_ count: Int, worker: Int, parts: Int) -> Range<Int> {
        let lower = count * worker / parts
        let upper = count * (worker + 1) / parts
        return lower..<upper
    }

    private final class ResultBox: @unchecked Sendable {
        private let mutex = PthreadMutex()
        private var storage: [Int]
        init(count: Int) { storage = Array(repeating: 0, count: count) }
        func set(_ index: Int, _ value: Int) { mutex.withLock { storage[index] = value } }
        var values: [Int] { mutex.withLock { storage } }
    }

    private final class LatencyBox: @unchecked Sendable {
        private let mutex = PthreadMutex()
        private var storage: [UInt64] = []
        func append(_ values: [UInt64]) { mutex.withLock { storage += values } }
        var values: [UInt64] { mutex.withLock { storage } }
    }
}

/// A thread that runs one closure and is joined: after `join()`, the closure and its
/// captures are released by the joining thread, not by the exiting one (Foundation's
/// `Thread` releases its closure on the thread as it exits, at a time nobody waits for).
final class JoinableThread {
    private final class Work {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    private var thread = pthread_t()
    private var work: Unmanaged<Work>?

    init(stackSize: Int, _ body: @escaping () -> Void) {
        let work = Unmanaged.passRetained(Work(body))
        self.work = work
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSize)
        let code = pthread_create(&thread, &attributes, { context in
            // Unretained: the joiner holds the reference, and releases it after `join`.
            Unmanaged<Work>.fromOpaque(context!).takeUnretainedValue().body()
            return nil
        }, work.toOpaque())
        precondition(code == 0, "pthread_create failed: \(code)")
    }

    deinit { join() }

    /// Waits for the thread to exit, then releases its closure on the calling thread.
    func join() {
        guard let work else { return }
        pthread_join(thread, nil)
        work.release()
        self.work = nil
    }
}
