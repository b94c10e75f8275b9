import Dispatch
import Foundation
@testable import KVCache

/// A thread of its own that runs what it is given, one call at a time: its reads of a
/// memory cache always go to the same read lane.
final class LaneThread: @unchecked Sendable {
    private let workReady = DispatchSemaphore(value: 0)
    private let workDone = DispatchSemaphore(value: 0)
    /// Handed over through the semaphores: set before `workReady`, read after it.
    private var work: (() -> Void)?

    init() {
        Thread.detachNewThread { [self] in
            while true {
                workReady.wait()
                guard let work else { break }
                work()
                workDone.signal()
            }
            workDone.signal()
        }
    }

    /// Runs `body` on the thread and returns its result.
    func run<Result>(_ body: @escaping () -> Result) -> Result {
        var result: Result?
        work = { result = body() }
        workReady.signal()
        workDone.wait()
        return result!
    }

    /// Ends the thread.
    func stop() {
        work = nil
        workReady.signal()
        workDone.wait()
    }

    /// Two threads that read on different lanes of `storage`'s cache, with their lanes.
    /// Threads are numbered in the order they first read, so a few new threads are enough.
    static func twoOnDifferentLanes<Key: Hashable, Value>(of storage: LRUStorage<Key, Value>) -> (LaneThread, Int, LaneThread, Int) {
        let first = LaneThread()
        let firstLane = first.run { storage.currentLaneIndex }
        while true {
            let second = LaneThread()
            let secondLane = second.run { storage.currentLaneIndex }
            if secondLane != firstLane { return (first, firstLane, second, secondLane) }
            second.stop()
        }
    }
}
