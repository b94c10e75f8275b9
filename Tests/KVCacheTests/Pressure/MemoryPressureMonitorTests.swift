import Foundation
import Testing
@testable import KVCache

struct MemoryPressureMonitorTests {
    /// A monitor reading a fake PSI file, with default thresholds (some 10, full 5)
    /// and fractions (warning keeps 0.5, critical keeps 0).
    private static func makeMonitor(
        _ file: FakePressureFile, retrimInterval: Duration = .seconds(Int64.max)
    ) throws -> MemoryPressureMonitor {
        try MemoryPressureMonitor(configuration: .init(pressureFile: file.path, retrimInterval: retrimInterval))
    }

    @Test func highSomePressureTrimsRegisteredCachesToTheWarningFraction() throws {
        let file = try FakePressureFile()
        defer { file.remove() }
        let monitor = try Self.makeMonitor(file)
        let cache = TrimRecorder()
        monitor.register(cache)

        try file.write(some: 25, full: 0)

        #expect(try monitor.checkNow() == .warning)
        #expect(cache.trims == [.init(fraction: 0.5, reason: .pressure)])
    }

    @Test func highFullPressureEmptiesRegisteredCaches() throws {
        let file = try FakePressureFile()
        defer { file.remove() }
        let monitor = try Self.makeMonitor(file)
        let caches = [TrimRecorder(), TrimRecorder()]
        for cache in caches { monitor.register(cache) }

        try file.write(some: 40, full: 8)

        #expect(try monitor.checkNow() == .critical)
        for cache in caches { #expect(cache.trims == [.init(fraction: 0, reason: .pressure)]) }
    }

    @Test func pressureBelowTheThresholdsTrimsNothing() throws {
        let file = try FakePressureFile()
        defer { file.remove() }
        let monitor = try Self.makeMonitor(file)
        let cache = TrimRecorder()
        monitor.register(cache)

        try file.write(some: 9.99, full: 4.99)

        #expect(try monitor.checkNow() == .normal)
        #expect(cache.trims.isEmpty)
    }

    @Test func thresholdsAndFractionsComeFromTheConfiguration() throws {
        let file = try FakePressureFile()
        defer { file.remove() }
        let monitor = try MemoryPressureMonitor(configuration: .init(
            pressureFile: file.path, warningThreshold: 1, criticalThreshold: 50,
            warningTrimFraction: 0.8, criticalTrimFraction: 0.1))
        let cache = TrimRecorder()
        monitor.register(cache)

        try file.write(some: 2, full: 20)
        #expect(try monitor.checkNow() == .warning)
        try file.write(some: 90, full: 60)
        #expect(try monitor.checkNow() == .critical)

        #expect(cache.trims.map(\.fraction) == [0.8, 0.1])
    }

    @Test func persistingPressureTrimsOnceUntilItRisesOrReturnsAfterEasing() throws {
        let file = try FakePressureFile()
        defer { file.remove() }
        let monitor = try Self.makeMonitor(file, retrimInterval: .seconds(Int64.max))
        let cache = TrimRecorder()
        monitor.register(cache)

        try file.write(some: 20, full: 0)
        try monitor.checkNow()
        try monitor.checkNow()
        #expect(cache.trims.map(\.fraction) == [0.5], "the same level does not trim again")

        try file.write(some: 20, full: 10)
        try monitor.checkNow()
        #expect(cache.trims.map(\.fraction) == [0.5, 0], "a rise trims at once")

        try file.write(some: 20, full: 0)
        try monitor.checkNow()
        #expect(cache.trims.count == 2, "a fall does not trim")

        try file.write(some: 0, full: 0)
        try monitor.checkNow()
        try file.write(some: 20, full: 0)
        try monitor.checkNow()
        #expect(cache.trims.map(\.fraction) == [0.5, 0, 0.5], "pressure that returns after easing trims again")
    }

    @Test func persistingPressureTrimsAgainAfterTheRetrimInterval() throws {
        let file = try FakePressureFile()
        defer { file.remove() }
        let monitor = try Self.makeMonitor(file, retrimInterval: .seconds(0))
        let cache = TrimRecorder()
        monitor.register(cache)

        try file.write(some: 20, full: 0)
        try monitor.checkNow()
        try monitor.checkNow()

        #expect(cache.trims.map(\.fraction) == [0.5, 0.5])
    }

    @Test func handlingALevelTrimsEveryRegisteredCacheRegardlessOfTheFile() throws {
        let monitor = try MemoryPressureMonitor(configuration: .init(pressureFile: "/nonexistent"))
        let cache = TrimRecorder()
        monitor.register(cache)

        monitor.handle(.normal)
        monitor.handle(.warning)
        monitor.handle(.critical)
        monitor.handle(.warning)

        #expect(cache.trims.map(\.fraction) == [0.5, 0, 0.5])
        #expect(cache.trims.allSatisfy { $0.reason == .pressure })
    }

    @Test func unregisteredCachesAreNotTrimmed() throws {
        let monitor = try MemoryPressureMonitor()
        let kept = TrimRecorder()
        let removed = TrimRecorder()
        monitor.register(kept)
        monitor.register(removed)
        monitor.register(removed)

        monitor.unregister(removed)
        monitor.handle(.warning)

        #expect(kept.trims.count == 1)
        #expect(removed.trims.isEmpty)
    }

    @Test func theMonitorDoesNotKeepCachesAlive() throws {
        let monitor = try MemoryPressureMonitor()
        weak var released: TrimRecorder?
        do {
            let cache = TrimRecorder()
            released = cache
            monitor.register(cache)
        }

        #expect(released == nil)
        monitor.handle(.critical)
    }

    @Test(arguments: [
        MemoryPressureMonitor.Configuration(warningThreshold: -1),
        MemoryPressureMonitor.Configuration(criticalThreshold: 101),
        MemoryPressureMonitor.Configuration(pollInterval: .seconds(0)),
        MemoryPressureMonitor.Configuration(retrimInterval: .seconds(-1)),
        MemoryPressureMonitor.Configuration(warningTrimFraction: 1.5),
        MemoryPressureMonitor.Configuration(criticalTrimFraction: -0.1),
        MemoryPressureMonitor.Configuration(trigger: .init(stall: .seconds(3), window: .seconds(2))),
        MemoryPressureMonitor.Configuration(trigger: .init(stall: .seconds(0.1), window: .seconds(20))),
    ])
    func anOutOfRangeConfigurationIsRejected(configuration: MemoryPressureMonitor.Configuration) {
        #expect(throws: KVCacheError.self) { try MemoryPressureMonitor(configuration: configuration) }
    }

    @Test func aTriggerIsWrittenInMicroseconds() {
        #expect(MemoryPressureMonitor.Trigger().command == "some 200000 2000000")
        #expect(MemoryPressureMonitor.Trigger(stall: .seconds(0.15), window: .seconds(1)).command == "some 150000 1000000")
    }

    @Test func checkingAFileThatIsNotPSIThrows() throws {
        let file = try FakePressureFile()
        defer { file.remove() }
        try "hello\n".write(toFile: file.path, atomically: true, encoding: .utf8)
        let monitor = try Self.makeMonitor(file)

        #expect(throws: KVCacheError.invalidArgument("\(file.path) is not a pressure stall information file")) {
            try monitor.checkNow()
        }
    }

    @Test func startingWithoutAReadableFileThrowsAndLeavesTheMonitorStopped() throws {
        let monitor = try MemoryPressureMonitor(configuration: .init(pressureFile: "/nonexistent/memory.pressure"))

        #expect(throws: KVCacheError.io(operation: "open", path: "/nonexistent/memory.pressure", errno: ENOENT)) {
            try monitor.start()
        }
        #expect(!monitor.isRunning)
    }
}
