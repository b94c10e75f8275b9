import Foundation

/// A fixed number of threads for blocking work (disk I/O) that async callers await.
///
/// The async variants used to run on a concurrent `DispatchQueue`, which starts a
/// thread for every blocked job under load. Here at most `threadCount` jobs run at
/// once; the rest wait in order. A job whose task is cancelled before it starts
/// never runs: the caller gets `CancellationError`. A job that has started runs
/// to its end (disk work is not interrupted halfway).
final class BlockingWorkPool: @unchecked Sendable {
    /// The pool of every cache in the process: twice the cores, at least 4.
    static let shared = BlockingWorkPool(threadCount: max(4, 2 * ProcessInfo.processInfo.activeProcessorCount))

    private final class Job: @unchecked Sendable {
        let work: () -> Void
        let cancel: () -> Void
        /// Guarded by the pool's mutex.
        var isDone = false
        init(work: @escaping () -> Void, cancel: @escaping () -> Void) {
            self.work = work
            self.cancel = cancel
        }
    }

    let threadCount: Int
    private let mutex = PThreadMutex()
    private let wakeUp = Condition()
    // Guarded by `mutex`.
    private var queue: [Job] = []
    private var head = 0
    private var running = 0
    /// Threads started; never more than `threadCount`.
    private var started = 0

    init(threadCount: Int) {
        self.threadCount = max(1, threadCount)
    }

    /// Jobs running now, and threads started (for tests).
    var runningCount: Int { mutex.withLock { running } }
    var threadsStarted: Int { mutex.withLock { started } }

    /// Runs `work` on one of the pool's threads and returns its result. Throws
    /// `CancellationError` if the task is cancelled before the work starts.
    func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try Task.checkCancellation()
        let box = MutexBox<Job?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, Error>) in
                let job = Job(work: { continuation.resume(with: Swift.Result { try work() }) },
                              cancel: { continuation.resume(throwing: CancellationError()) })
                box.withLock { $0 = job }
                enqueue(job)
            }
        } onCancel: {
            if let job = box.withLock({ $0 }) { cancelIfWaiting(job) }
        }
    }

    private func enqueue(_ job: Job) {
        mutex.lock()
        queue.append(job)
        // Threads start on demand up to the bound and then stay (they are few).
        if started < threadCount {
            started += 1
            mutex.unlock()
            let thread = Thread { [self] in work() }
            thread.name = "KVCache.BlockingWorkPool"
            thread.start()
        } else {
            mutex.unlock()
            wakeUp.signal()
        }
    }

    /// A cancelled job that has not started ends now with `CancellationError`.
    private func cancelIfWaiting(_ job: Job) {
        mutex.lock()
        guard !job.isDone else {
            mutex.unlock()
            return
        }
        job.isDone = true
        mutex.unlock()
        job.cancel()
    }

    /// A worker: runs queued jobs forever (the shared pool lives as long as the process).
    private func work() {
        mutex.lock()
        while true {
            guard head < queue.count else {
                queue.removeAll(keepingCapacity: true)
                head = 0
                wakeUp.wait(on: mutex, until: nil)
                continue
            }
            let job = queue[head]
            head += 1
            if job.isDone { continue }  // cancelled while it waited
            job.isDone = true
            running += 1
            mutex.unlock()
            job.work()
            mutex.lock()
            running -= 1
        }
    }
}
