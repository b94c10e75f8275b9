import Benchmark
import Foundation
import KVCache

// Mallocs on KVCache's hot paths. Each benchmark iteration does 1,000
// operations (`scaledIterations`): the tables print mallocs per operation
// (rounded), Thresholds/*.json hold the exact count per 1,000 operations
// that `swift package benchmark thresholds check` compares against, with the
// tolerance each benchmark states below.

/// Keys like the CLI's memory benchmark: ~30 bytes, too long for a small string.
private let keyCount = 1_000
private let memoryKeys = (0..<keyCount).map { "item:\($0):\(String(UInt64($0) &* 0x9E37_79B9_7F4A_7C15, radix: 16))" }
private let diskKeys = (0..<keyCount).map { "key-\($0)" }
private let diskValue = Data(repeating: 0xA5, count: 1024)

/// State created in a benchmark's setup, outside the measurement.
private final class Fixture: @unchecked Sendable {
    static let shared = Fixture()
    var memory = MemoryCache<String, Int>()
    /// Bounded at exactly its keys, so the adaptive policy counts every use.
    let boundedMemory = try! MemoryCache<String, Int>(configuration: .init(countLimit: keyCount))
    let lruMemory = try! MemoryCache<String, Int>(configuration: .init(countLimit: keyCount, policy: .lru))
    var directory: URL?
    var disk: DiskCache?

    func openDisk() throws -> DiskCache {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kvcache-allocations-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let disk = try DiskCache(directory: directory)
        for key in diskKeys { try disk.setValue(diskValue, forKey: key) }
        try disk.flush()
        self.directory = directory
        self.disk = disk
        return disk
    }

    func closeDisk() {
        try? disk?.close()
        disk = nil
        if let directory { try? FileManager.default.removeItem(at: directory) }
        directory = nil
    }
}

// Names without spaces: 1.38.1 writes threshold files with spaces turned into
// underscores but looks them up with the spaces, so a spaced name never matches.

/// Mallocs only: times belong to kvcache-bench, and a time threshold would fail on a busy machine.
/// `tolerance`: how many mallocs per 1,000 operations the p90 may differ from the stored count by,
/// either way (the check also fails on an unexpected improvement, so the stored count stays true).
private func configuration(tolerance: Int) -> Benchmark.Configuration {
    .init(
        metrics: [.mallocCountTotal],
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(1),
        maxIterations: 1_000,
        thresholds: [.mallocCountTotal: BenchmarkThresholds(absolute: [.p90: tolerance])])
}

let benchmarks: @Sendable () -> Void = {
    // Exactly 0: a hit allocates nothing.
    Benchmark("MemoryCache_get_hit", configuration: configuration(tolerance: 0), closure: { benchmark in
        let cache = Fixture.shared.memory
        var index = 0
        for _ in benchmark.scaledIterations {
            blackHole(cache.value(forKey: memoryKeys[index]))
            index = index == keyCount - 1 ? 0 : index + 1
        }
    }, setup: fillMemory)

    // Exactly 0 under a limit too: counting the use in the sketch and moving the entry
    // between the adaptive policy's segments allocate nothing, nor does LRU's move.
    for (name, cache) in [("MemoryCache_get_hit_adaptive_bounded", Fixture.shared.boundedMemory),
                          ("MemoryCache_get_hit_lru_bounded", Fixture.shared.lruMemory)] {
        Benchmark(name, configuration: configuration(tolerance: 0), closure: { benchmark in
            var index = 0
            for _ in benchmark.scaledIterations {
                blackHole(cache.value(forKey: memoryKeys[index]))
                index = index == keyCount - 1 ? 0 : index + 1
            }
        }, setup: {
            for (index, key) in memoryKeys.enumerated() { cache.setValue(index, forKey: key) }
        })
    }

    // Replacing reuses the entry: a few mallocs per 1,000 sets, amortized, none per set.
    Benchmark("MemoryCache_set_replacing_a_key", configuration: configuration(tolerance: 50), closure: { benchmark in
        let cache = Fixture.shared.memory
        var index = 0
        for _ in benchmark.scaledIterations {
            cache.setValue(index, forKey: memoryKeys[index])
            index = index == keyCount - 1 ? 0 : index + 1
        }
        // Background releases of the replaced values are not this loop's allocations.
        cache.waitForBackgroundWork()
    }, setup: fillMemory)

    // A fixed count per get (the returned Data among them).
    Benchmark("DiskCache_1KB_get_hit", configuration: configuration(tolerance: 0), closure: { benchmark in
        guard let disk = Fixture.shared.disk else { return }
        var index = 0
        for _ in benchmark.scaledIterations {
            blackHole(try disk.value(forKey: diskKeys[index]))
            index = index == keyCount - 1 ? 0 : index + 1
        }
    }, setup: openDisk, teardown: closeDisk)

    // Varies with how many sets each group commit takes: allow 2,500 per 1,000 sets (about 10 %).
    Benchmark("DiskCache_1KB_set", configuration: configuration(tolerance: 2_500), closure: { benchmark in
        guard let disk = Fixture.shared.disk else { return }
        var index = 0
        for _ in benchmark.scaledIterations {
            try disk.setValue(diskValue, forKey: diskKeys[index])
            index = index == keyCount - 1 ? 0 : index + 1
        }
    }, setup: openDisk, teardown: closeDisk)
}

@Sendable private func fillMemory() {
    let cache = MemoryCache<String, Int>()
    for (index, key) in memoryKeys.enumerated() { cache.setValue(index, forKey: key) }
    Fixture.shared.memory = cache
}

@Sendable private func openDisk() throws {
    _ = try Fixture.shared.openDisk()
}

@Sendable private func closeDisk() {
    Fixture.shared.closeDisk()
}
