import Foundation
import Testing
@testable import KVCache

struct CachePressureTests {
    @Test func aConfiguredMonitorTrimsTheMemoryLevelOnly() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let monitor = try MemoryPressureMonitor()
        let cache = try fixture.make { $0.memoryPressureMonitor = monitor }
        for index in 0..<10 { try cache.setValue(bytes(100), forKey: "key\(index)") }

        monitor.handle(.warning)
        #expect(cache.memory.count == 5)
        #expect(cache.memory.totalCost == 500)

        monitor.handle(.critical)
        #expect(cache.memory.count == 0)
        #expect(cache.statistics.memory.evictions[.pressure] == 10)
        #expect(try cache.disk.totalCount == 10)
        #expect(try cache.result(forKey: "key3").source == .disk)
    }

    @Test func aPressureFileReadingTrimsARegisteredCache() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let file = try FakePressureFile()
        defer { file.remove() }
        let monitor = try MemoryPressureMonitor(configuration: .init(pressureFile: file.path))
        let cache = try fixture.make()
        monitor.register(cache.memory)
        for index in 0..<10 { try cache.setValue(bytes(100), forKey: "key\(index)") }

        try file.write(some: 3, full: 0)
        #expect(try monitor.checkNow() == .normal)
        #expect(cache.memory.count == 10)

        try file.write(some: 40, full: 8)
        #expect(try monitor.checkNow() == .critical)
        #expect(cache.memory.count == 0)
    }

    @Test func cachesWithoutAMonitorAreNotTrimmed() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let monitor = try MemoryPressureMonitor()
        let cache = try fixture.make()
        try cache.setValue(bytes(100), forKey: "a")

        monitor.handle(.critical)

        #expect(cache.memory.count == 1)
    }
}
