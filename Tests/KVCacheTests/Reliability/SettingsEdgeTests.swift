import Foundation
import Testing
@testable import KVCache

/// Every numeric setting of every configuration at 0, negative, NaN, ±infinity and
/// the largest finite value: the configuration is rejected with `invalidArgument`,
/// or the cache works (set, get, flush, close) — never a trap. Issue 12, item 3:
/// `busyTimeout = .infinity` trapped at open and `groupCommitDelay = .infinity` on
/// the first write.
@Suite struct SettingsEdgeTests {
    static let doubles: [Double] = [0, -1, .nan, .infinity, -.infinity, .greatestFiniteMagnitude]
    static let integers: [Int] = [0, -1, .max, .min]

    /// The outcome of opening and using a disk cache with one setting changed.
    enum Outcome: Equatable {
        case rejected
        case works
    }

    static func tryDisk(_ configure: (inout DiskCache.Configuration) -> Void) throws -> Outcome {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var configuration = DiskCache.Configuration()
        configure(&configuration)
        let cache: DiskCache
        do {
            cache = try DiskCache(directory: dir.url, configuration: configuration)
        } catch KVCacheError.Code.invalidArgument {
            return .rejected
        }
        // Inline and file values, a flush and a reopen: every timer and conversion runs.
        // (Limits of 0 let a background trim remove them at any time.)
        let keepsValues = configuration.countLimit >= 2 && configuration.sizeLimit >= 30_100
        try cache.setValue(bytes(100), forKey: "small")
        try cache.setValue(bytes(30_000), forKey: "large")
        if keepsValues {
            #expect(try cache.value(forKey: "small") == bytes(100))
            #expect(try cache.value(forKey: "large") == bytes(30_000))
        }
        try cache.flush()
        _ = try cache.trim(toCount: 10)
        try cache.close()
        let reopened = try DiskCache(directory: dir.url, configuration: configuration)
        defer { try? reopened.close() }
        if keepsValues {
            #expect(try reopened.value(forKey: "small") == bytes(100))
        }
        return .works
    }

    @Test(arguments: doubles)
    func diskDoubleSettings(value: Double) throws {
        let settings: [(String, WritableKeyPath<DiskCache.Configuration, Double>)] = [
            ("ageLimit", \.ageLimit), ("lowWatermark", \.lowWatermark),
            ("groupCommitDelay", \.groupCommitDelay), ("accessTimeFlushInterval", \.accessTimeFlushInterval),
            ("accessTimeResolution", \.accessTimeResolution), ("busyTimeout", \.busyTimeout),
            ("orphanGracePeriod", \.orphanGracePeriod),
        ]
        for (name, path) in settings {
            let outcome = try Self.tryDisk { $0[keyPath: path] = value }
            if value.isNaN || value < 0 { #expect(outcome == .rejected, "\(name) = \(value)") }
        }
        let interval = try Self.tryDisk { $0.autoTrimInterval = value }
        if !(value > 0) { #expect(interval == .rejected, "autoTrimInterval = \(value)") }
    }

    @Test(arguments: integers)
    func diskIntegerSettings(value: Int) throws {
        let settings: [(String, WritableKeyPath<DiskCache.Configuration, Int>)] = [
            ("inlineThreshold", \.inlineThreshold), ("countLimit", \.countLimit),
            ("maxKeyLength", \.maxKeyLength), ("groupCommitMaxWrites", \.groupCommitMaxWrites),
            ("pageSize", \.pageSize), ("readConnections", \.readConnections),
        ]
        for (name, path) in settings {
            let outcome = try Self.tryDisk { $0[keyPath: path] = value }
            if value < 0 { #expect(outcome == .rejected, "\(name) = \(value)") }
        }
        // From 1 to 64 read connections; 0 would leave reads nowhere to run.
        let pool = try Self.tryDisk { $0.readConnections = value }
        #expect((pool == .rejected) == !(1...64).contains(value), "readConnections = \(value)")
        for (name, path) in [("sizeLimit", \DiskCache.Configuration.sizeLimit),
                             ("freeDiskSpaceLimit", \DiskCache.Configuration.freeDiskSpaceLimit)] {
            let outcome = try Self.tryDisk { $0[keyPath: path] = Int64(value) }
            if value < 0 { #expect(outcome == .rejected, "\(name) = \(value)") }
        }
    }

    @Test(arguments: doubles)
    func memoryDoubleSettings(value: Double) throws {
        // MemoryCache's initializer does not throw: out-of-range values take the
        // documented meaning (NaN age: no limit; NaN watermark: 1; a non-positive,
        // NaN or infinite interval: no timer).
        for configure in [{ (c: inout MemoryCache<String, Int>.Configuration) in c.ageLimit = value },
                          { $0.lowWatermark = value }, { $0.autoTrimInterval = value }] {
            var configuration = MemoryCache<String, Int>.Configuration(countLimit: 10)
            configure(&configuration)
            let cache = MemoryCache<String, Int>(configuration: configuration)
            for index in 0..<20 { cache.setValue(index, forKey: "k\(index)") }
            #expect(cache.count <= 10)
            _ = cache.value(forKey: "k19")
            cache.trim(toCount: 0)
            cache.waitForBackgroundWork()
            #expect(cache.count == 0)
        }
    }

    @Test(arguments: doubles)
    func pressureMonitorSettings(value: Double) throws {
        let settings: [WritableKeyPath<MemoryPressureMonitor.Configuration, Double>] = [
            \.warningThreshold, \.criticalThreshold, \.pollInterval, \.retrimInterval,
            \.warningTrimFraction, \.criticalTrimFraction,
        ]
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        let file = dir.path + "/memory.pressure"
        try "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        for path in settings {
            var configuration = MemoryPressureMonitor.Configuration(pressureFile: file, trigger: nil)
            configuration[keyPath: path] = value
            do {
                let monitor = try MemoryPressureMonitor(configuration: configuration)
                try monitor.start()
                monitor.stop()
            } catch KVCacheError.Code.invalidArgument {
                // Rejected with a reason: fine. NaN must never be accepted.
                continue
            }
            #expect(!value.isNaN, "accepted \(path) = NaN")
        }
    }

    /// One expiration rule in both levels (issue 12): NaN, zero and negative seconds
    /// have expired already; infinity never expires. Memory kept a NaN entry forever
    /// while disk expired it at once.
    @Test func expirationEdgesMeanTheSameInBothLevels() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try Cache<Data>(name: "edges", baseDirectory: dir.url)
        let expected: [(Expiration, Bool)] = [
            (.seconds(.nan), false), (.seconds(0), false), (.seconds(-5), false),
            (.seconds(.infinity), true), (.seconds(.greatestFiniteMagnitude), true),
            (.date(Date(timeIntervalSince1970: .nan)), false), (.date(.distantFuture), true),
        ]
        for (index, (expiration, isStored)) in expected.enumerated() {
            let key = "k\(index)"
            let memory = MemoryCache<String, Data>(configuration: .init(autoTrimInterval: nil))
            memory.setValue(bytes(10), forKey: key, expiration: expiration)
            #expect((memory.value(forKey: key) != nil) == isStored, "memory \(expiration)")
            let disk = try DiskCache(directory: dir.url.appendingPathComponent("disk\(index)"), configuration: .testing())
            try disk.setValue(bytes(10), forKey: key, expiration: expiration)
            #expect((try disk.value(forKey: key) != nil) == isStored, "disk \(expiration)")
            try disk.flush()
            #expect((try disk.value(forKey: key) != nil) == isStored, "disk after a commit \(expiration)")
            try disk.close()
            try cache.setValue(bytes(10), forKey: key, expiration: expiration)
            #expect((try cache.value(forKey: key) != nil) == isStored, "facade \(expiration)")
        }
    }
}
