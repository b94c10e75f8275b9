import Foundation
import Testing
@testable import KVCache

/// Every numeric setting of every configuration at 0, negative, NaN, ±infinity and
/// the largest value (durations: zero, negative, the smallest positive, the largest
/// and the smallest `Duration`): the configuration is rejected with `invalidArgument`,
/// or the cache works (set, get, flush, close) — never a trap. Issue 12, item 3:
/// `busyTimeout = .infinity` trapped at open and `groupCommitDelay = .infinity` on
/// the first write. One rule on every level (issue 14): out of range is rejected,
/// never clamped.
@Suite struct SettingsEdgeTests {
    static let doubles: [Double] = [0, -1, .nan, .infinity, -.infinity, .greatestFiniteMagnitude]
    static let integers: [Int] = [0, -1, .max, .min]
    static let durations: [Duration] = [
        .zero, .seconds(-1), .nanoseconds(1), .seconds(Int64.max), .seconds(Int64.min),
    ]

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

    @Test(arguments: durations)
    func diskDurationSettings(value: Duration) throws {
        var settings: [(String, WritableKeyPath<DiskCache.Configuration, Duration>)] = [
            ("groupCommitDelay", \.groupCommitDelay), ("accessTimeFlushInterval", \.accessTimeFlushInterval),
            ("accessTimeResolution", \.accessTimeResolution), ("busyTimeout", \.busyTimeout),
            ("orphanGracePeriod", \.orphanGracePeriod),
        ]
        #if Metrics
        settings.append(("metricsInterval", \.metricsInterval))
        #endif
        for (name, path) in settings {
            let outcome = try Self.tryDisk { $0[keyPath: path] = value }
            // metricsInterval must be positive; the others may be zero.
            let refused = name == "metricsInterval" ? !(value > .zero) : value < .zero
            #expect((outcome == .rejected) == refused, "\(name) = \(value)")
        }
        let age = try Self.tryDisk { $0.ageLimit = value }
        #expect((age == .rejected) == (value < .zero), "ageLimit = \(value)")
        let interval = try Self.tryDisk { $0.autoTrimInterval = value }
        #expect((interval == .rejected) == !(value > .zero), "autoTrimInterval = \(value)")
    }

    @Test(arguments: doubles)
    func diskWatermark(value: Double) throws {
        let outcome = try Self.tryDisk { $0.lowWatermark = value }
        #expect((outcome == .rejected) == !(value > 0 && value <= 1), "lowWatermark = \(value)")
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

    /// Opens and uses a memory cache with one setting changed (as `tryDisk`).
    static func tryMemory(_ configure: (inout MemoryCache<String, Int>.Configuration) -> Void) throws -> Outcome {
        var configuration = MemoryCache<String, Int>.Configuration(countLimit: 10)
        configure(&configuration)
        let cache: MemoryCache<String, Int>
        do {
            cache = try MemoryCache<String, Int>(configuration: configuration)
        } catch KVCacheError.Code.invalidArgument {
            return .rejected
        }
        for index in 0..<20 { cache.setValue(index, forKey: "k\(index)", expiration: .after(.seconds(60))) }
        #expect(cache.count <= min(20, configuration.countLimit))
        _ = cache.value(forKey: "k19")
        try cache.trim(toCount: 0)
        cache.waitForBackgroundWork()
        #expect(cache.count == 0)
        try cache.close()
        return .works
    }

    @Test(arguments: durations)
    func memoryDurationSettings(value: Duration) throws {
        let age = try Self.tryMemory { $0.ageLimit = value }
        #expect((age == .rejected) == (value < .zero), "ageLimit = \(value)")
        let interval = try Self.tryMemory { $0.autoTrimInterval = value }
        #expect((interval == .rejected) == !(value > .zero), "autoTrimInterval = \(value)")
    }

    @Test(arguments: doubles)
    func memoryWatermark(value: Double) throws {
        // The same rule as the disk level's: (0, 1], NaN rejected (it was clamped before issue 14).
        let outcome = try Self.tryMemory { $0.lowWatermark = value }
        #expect((outcome == .rejected) == !(value > 0 && value <= 1), "lowWatermark = \(value)")
    }

    @Test(arguments: integers)
    func memoryLimitsAndTrims(value: Int) throws {
        let count = try Self.tryMemory { $0.countLimit = value }
        #expect((count == .rejected) == (value < 0), "countLimit = \(value)")
        let cost = try Self.tryMemory { $0.costLimit = Int64(value) }
        #expect((cost == .rejected) == (value < 0), "costLimit = \(value)")
        // The setters and trims follow the same rule, and a refused call changes nothing.
        let cache = try MemoryCache<String, Int>(configuration: .init(countLimit: 10))
        for index in 0..<5 { cache.setValue(index, forKey: "k\(index)", cost: 1) }
        let calls: [(String, () throws -> Void)] = [
            ("setCountLimit", { try cache.setCountLimit(value) }),
            ("setCostLimit", { try cache.setCostLimit(Int64(value)) }),
            ("trim(toCount:)", { try cache.trim(toCount: value) }),
            ("trim(toCost:)", { try cache.trim(toCost: Int64(value)) }),
        ]
        for (name, call) in calls {
            if value < 0 {
                #expect(throws: KVCacheError.self, "\(name)(\(value))") { try call() }
                #expect(cache.count == 5, "\(name)(\(value)) changed the cache")
                #expect(cache.countLimit == 10)
            } else {
                try call()
            }
        }
    }

    @Test(arguments: durations)
    func ageTrimsAndSetters(value: Duration) throws {
        let memory = try MemoryCache<String, Int>(configuration: .init())
        memory.setValue(1, forKey: "a")
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let disk = try DiskCache(directory: dir.url, configuration: .testing())
        defer { try? disk.close() }
        try disk.setValue(bytes(10), forKey: "a")
        if value < .zero {
            #expect(throws: KVCacheError.self) { try memory.trim(toAge: value) }
            #expect(throws: KVCacheError.self) { try memory.setAgeLimit(value) }
            #expect(throws: KVCacheError.self) { try disk.trim(toAge: value) }
            #expect(throws: KVCacheError.self) { try disk.sweepOrphans(gracePeriod: value) }
            #expect(throws: KVCacheError.self) { try disk.verify(orphanGracePeriod: value) }
            #expect(memory.ageLimit == nil)
            #expect(memory.count == 1)
            #expect(try disk.totalCount == 1)
        } else {
            try memory.setAgeLimit(value)
            #expect(memory.ageLimit == value)
            try memory.trim(toAge: value)
            _ = try disk.trim(toAge: value)
            _ = try disk.sweepOrphans(gracePeriod: value)
            _ = try disk.verify(orphanGracePeriod: value)
            try memory.setAgeLimit(nil)
            #expect(memory.ageLimit == nil)
        }
    }

    @Test(arguments: doubles)
    func fractionTrims(value: Double) throws {
        let memory = try MemoryCache<String, Int>(configuration: .init())
        for index in 0..<4 { memory.setValue(index, forKey: "k\(index)") }
        if (0...1).contains(value) {
            try memory.trim(toFraction: value)
        } else {
            #expect(throws: KVCacheError.self, "trim(toFraction: \(value))") { try memory.trim(toFraction: value) }
            #expect(memory.count == 4)
        }
    }

    @Test(arguments: doubles)
    func pressureMonitorSettings(value: Double) throws {
        let settings: [(WritableKeyPath<MemoryPressureMonitor.Configuration, Double>, ClosedRange<Double>)] = [
            (\.warningThreshold, 0...100), (\.criticalThreshold, 0...100),
            (\.warningTrimFraction, 0...1), (\.criticalTrimFraction, 0...1),
        ]
        for (path, range) in settings {
            let outcome = try Self.tryMonitor { $0[keyPath: path] = value }
            #expect((outcome == .rejected) == !range.contains(value), "\(path) = \(value)")
        }
    }

    @Test(arguments: durations)
    func pressureMonitorDurations(value: Duration) throws {
        let poll = try Self.tryMonitor { $0.pollInterval = value }
        #expect((poll == .rejected) == !(value > .zero), "pollInterval = \(value)")
        let retrim = try Self.tryMonitor { $0.retrimInterval = value }
        #expect((retrim == .rejected) == (value < .zero), "retrimInterval = \(value)")
        let stall = try Self.tryMonitor { $0.trigger = .init(stall: value, window: .seconds(2)) }
        #expect((stall == .rejected) == !(value > .zero && value <= .seconds(2)), "stall = \(value)")
        let window = try Self.tryMonitor { $0.trigger = .init(stall: .milliseconds(1), window: value) }
        #expect((window == .rejected) == !(value >= .milliseconds(500) && value <= .seconds(10)), "window = \(value)")
    }

    /// Starts and stops a monitor on a PSI file of its own with one setting changed.
    static func tryMonitor(_ configure: (inout MemoryPressureMonitor.Configuration) -> Void) throws -> Outcome {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        let file = dir.path + "/memory.pressure"
        try "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        var configuration = MemoryPressureMonitor.Configuration(pressureFile: file, trigger: nil)
        configure(&configuration)
        do {
            let monitor = try MemoryPressureMonitor(configuration: configuration)
            try monitor.start()
            monitor.stop()
        } catch KVCacheError.Code.invalidArgument {
            return .rejected
        }
        return .works
    }

    /// One expiration rule in both levels (issue 12): zero and negative durations and
    /// a NaN date have expired already; the largest duration and an infinite date never
    /// expire. (Memory kept a NaN entry forever while disk expired it at once.)
    @Test func expirationEdgesMeanTheSameInBothLevels() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try Cache<Data>(name: "edges", baseDirectory: dir.url)
        let expected: [(Expiration, Bool)] = [
            (.after(.zero), false), (.after(.seconds(-5)), false), (.after(.seconds(Int64.min)), false),
            (.after(.seconds(Int64.max)), true), (.after(.seconds(3600)), true), (.never, true),
            (.at(Date(timeIntervalSince1970: .nan)), false), (.at(.distantFuture), true),
            (.at(Date(timeIntervalSince1970: .infinity)), true), (.at(.distantPast), false),
        ]
        for (index, (expiration, isStored)) in expected.enumerated() {
            let key = "k\(index)"
            let memory = try MemoryCache<String, Data>(configuration: .init(autoTrimInterval: nil))
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
