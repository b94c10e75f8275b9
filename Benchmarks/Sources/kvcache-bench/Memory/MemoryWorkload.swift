/// The memory workloads, each timed as one batch per run.
enum MemoryWorkload: String, CaseIterable, Sendable {
    /// Inserts every key into an empty, unbounded cache.
    case setFill = "set-fill"
    /// Looks up present keys chosen uniformly.
    case getHitUniform = "get-hit uniform"
    /// Looks up present keys chosen by Zipf(0.9).
    case getHitZipf = "get-hit zipf0.9"
    /// Looks up keys that were never inserted.
    case getMiss = "get-miss"
    /// Inserts every key into a cache limited to 10 % of them.
    case setWithEviction = "set-with-eviction"
    /// Zipf(0.9) over present keys: 9 gets, then a set of the next key, a server's mix.
    case mixedZipf = "mixed 90/10 zipf0.9"

    /// Whether the workload runs over a filled cache in several timed passes, after an
    /// untimed one (all but the mixed workload only look keys up).
    var isGet: Bool {
        switch self {
        case .getHitUniform, .getHitZipf, .getMiss, .mixedZipf: true
        case .setFill, .setWithEviction: false
        }
    }
}

/// Keys and access sequences, generated once per key count before any timing.
struct MemoryWorkloadData: Sendable {
    let keyCount: Int
    let keys: [String]
    let missingKeys: [String]
    let uniform: [Int]
    let zipf: [Int]
    /// The keys in the order of `uniform` and of `zipf`.
    var uniformKeys: [String] { uniform.map { keys[$0] } }
    var zipfKeys: [String] { zipf.map { keys[$0] } }
    /// Share of lookups that go to the 10 % most popular keys under Zipf(0.9).
    let zipfTopTenPercentMass: Double

    init(keyCount: Int, seed: UInt64 = 0xC0FFEE) {
        self.keyCount = keyCount
        var random = SplitMix64(seed: seed)
        // ~30-byte keys, like short URLs or composite ids: too long for Swift's
        // inline small strings, so hashing and comparing them is realistic.
        keys = (0..<keyCount).map { index in
            "item:\(index):" + String(random.next(), radix: 16)
        }
        missingKeys = (0..<keyCount).map { index in
            "miss:\(index):" + String(random.next(), radix: 16)
        }
        uniform = AccessPattern.uniform(count: keyCount, population: keyCount, seed: seed &+ 1)
        let zipf = Zipf(population: keyCount, exponent: 0.9, seed: seed &+ 2)
        self.zipf = zipf.indices(count: keyCount, seed: seed &+ 3)
        zipfTopTenPercentMass = zipf.mass(ofTop: keyCount / 10)
    }
}
