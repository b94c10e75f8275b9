import Foundation
import Testing
@testable import KVCache

// The limit catches a hang. On its own thread, a test's jobs do not queue behind the tests
// that hold the cooperative pool's threads (2 here); the unstructured tasks it starts still do.
@Suite(.onItsOwnThread, .timeLimit(.minutes(5)))
struct ConcurrencyMemoryPressureMonitorTests {
    @Test func aRunningMonitorTrimsWhenTheFileShowsPressure() async throws {
        let file = try FakePressureFile()
        defer { file.remove() }
        try file.write(some: 0, full: 0)
        let monitor = try MemoryPressureMonitor(configuration: .init(pressureFile: file.path, pollInterval: .seconds(0.01)))
        let cache = TrimRecorder()
        monitor.register(cache)

        try monitor.start()
        #expect(monitor.isRunning)
        #expect(!monitor.usesKernelTrigger, "no trigger is written into an ordinary file")
        try file.write(some: 0, full: 30)

        var trims = cache.events.makeAsyncIterator()
        #expect(await trims.next() == .init(fraction: 0, reason: .pressure))
        monitor.stop()
        #expect(!monitor.isRunning)
    }

    @Test func startingUnderPressureTrimsAtOnce() throws {
        let file = try FakePressureFile()
        defer { file.remove() }
        try file.write(some: 50, full: 0)
        let monitor = try MemoryPressureMonitor(configuration: .init(pressureFile: file.path))
        let cache = TrimRecorder()
        monitor.register(cache)

        try monitor.start()
        defer { monitor.stop() }

        #expect(cache.trims == [.init(fraction: 0.5, reason: .pressure)])
    }

    @Test func startAndStopCanBeCalledFromManyTasksAtOnce() async throws {
        let file = try FakePressureFile()
        defer { file.remove() }
        try file.write(some: 0, full: 0)
        let monitor = try MemoryPressureMonitor(configuration: .init(pressureFile: file.path, pollInterval: .seconds(0.001)))
        monitor.register(TrimRecorder())

        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    if index.isMultiple(of: 2) { try monitor.start() } else { monitor.stop() }
                    monitor.handle(.warning)
                    _ = try monitor.checkNow()
                }
            }
            try await group.waitForAll()
        }
        monitor.stop()
        #expect(!monitor.isRunning)
    }

    @Test(.enabled(if: PressureFileLocator.memoryPressureFile() != nil))
    func startsOnThisMachinesPressureFile() throws {
        let monitor = try MemoryPressureMonitor()

        try monitor.start()
        #expect(monitor.isRunning)
        monitor.stop()
        #expect(!monitor.isRunning)
    }
}
