#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A serial queue of jobs on one dedicated thread that yields to the caller's.
///
/// On Linux the thread runs under `SCHED_BATCH`: it gets its fair share of CPU, but
/// waking it never preempts a running thread. A group commit woken by its timer
/// every few milliseconds then waits for a free core instead of evicting the caller
/// that is writing values. (A pooled Dispatch worker cannot keep such a policy: the
/// next job on that thread would inherit it.)
///
/// The thread starts with this object, so no caller pays for its creation, and ends
/// once the owner has released this object and every job due has run; jobs still
/// waiting for their deadline then run at once.
final class BackgroundThread: Sendable {
    private let worker: Worker

    init() {
        worker = Worker()
        worker.start()
    }

    deinit { worker.stop() }

    /// Runs `job` after the jobs already due.
    func async(_ job: @escaping @Sendable () -> Void) {
        worker.enqueue(job, at: nil)
    }

    /// Runs `job` once `seconds` have passed (and the jobs due before it have run);
    /// never, for a delay that never comes (see `Seconds.never`).
    func asyncAfter(seconds: Double, _ job: @escaping @Sendable () -> Void) {
        if Seconds.isNever(seconds) { return }
        worker.enqueue(job, at: Condition.now() + max(0, seconds))
    }

    /// Blocks until no job is due or waiting for its deadline, including jobs that
    /// the jobs themselves schedule (for tests: a timer that has finished its work).
    /// Never call it from a job of this thread.
    func waitUntilIdle() {
        worker.waitUntilIdle()
    }
}

extension BackgroundThread {
    /// The thread's state; the thread itself keeps it alive until it ends.
    private final class Worker: @unchecked Sendable {
        private let mutex = PThreadMutex()
        private let wakeUp = Condition()
        private let becameIdle = Condition()
        // Guarded by `mutex`.
        private var isRunningJob = false
        private var due: [@Sendable () -> Void] = []
        private var dueHead = 0
        private var delayed: [(deadline: Double, job: @Sendable () -> Void)] = []
        private var isStopped = false

        init() {}

        func enqueue(_ job: @escaping @Sendable () -> Void, at deadline: Double?) {
            mutex.lock()
            if let deadline {
                delayed.append((deadline, job))
            } else {
                due.append(job)
            }
            mutex.unlock()
            wakeUp.signal()
        }

        func waitUntilIdle() {
            mutex.lock()
            while isRunningJob || dueHead < due.count || !delayed.isEmpty {
                becameIdle.wait(on: mutex, until: nil)
            }
            mutex.unlock()
        }

        func stop() {
            mutex.withLock { isStopped = true }
            wakeUp.signal()
        }

        func start() {
            let context = Unmanaged.passRetained(self).toOpaque()
            var thread = pthread_t()
            let result = pthread_create(&thread, nil, { context in
                let worker = Unmanaged<Worker>.fromOpaque(context!).takeRetainedValue()
                worker.run()
                return nil
            }, context)
            precondition(result == 0, "pthread_create failed: \(result)")
            pthread_detach(thread)
        }

        private func run() {
            BackgroundThread.yieldToCallers()
            mutex.lock()
            while true {
                // Delayed jobs whose time has come join the due ones, in deadline order.
                if !delayed.isEmpty {
                    let now = Condition.now()
                    if isStopped || delayed.contains(where: { $0.deadline <= now }) {
                        delayed.sort { $0.deadline < $1.deadline }
                        let ready = isStopped ? delayed.count : delayed.firstIndex { $0.deadline > now } ?? delayed.count
                        due += delayed[..<ready].map(\.job)
                        delayed.removeFirst(ready)
                    }
                }
                if dueHead < due.count {
                    let job = due[dueHead]
                    dueHead += 1
                    if dueHead == due.count {
                        due.removeAll(keepingCapacity: true)
                        dueHead = 0
                    }
                    isRunningJob = true
                    mutex.unlock()
                    job()
                    mutex.lock()
                    isRunningJob = false
                    continue
                }
                if delayed.isEmpty { becameIdle.broadcast() }
                if isStopped { break }
                if let next = delayed.lazy.map(\.deadline).min() {
                    wakeUp.wait(on: mutex, until: next)
                } else {
                    wakeUp.wait(on: mutex, until: nil)
                }
            }
            mutex.unlock()
        }
    }

    /// Puts the calling thread under `SCHED_BATCH` (Linux).
    static func yieldToCallers() {
        #if os(Linux)
        var parameters = sched_param()
        parameters.sched_priority = 0
        // SCHED_BATCH is 3 in <sched.h>, behind _GNU_SOURCE, which Swift's Glibc does not see.
        _ = pthread_setschedparam(pthread_self(), 3, &parameters)
        #endif
    }
}
