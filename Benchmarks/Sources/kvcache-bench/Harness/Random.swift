/// SplitMix64: a tiny, fast, seedable generator so every run sees the same keys.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in [0, 1) with 53 random bits.
    mutating func nextUnit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }
}

/// Index sequences generated before timing starts.
enum AccessPattern {
    /// `count` indices drawn uniformly from `0..<population`.
    static func uniform(count: Int, population: Int, seed: UInt64) -> [Int] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in Int(random.next() % UInt64(population)) }
    }

    /// A seeded permutation of `0..<count`.
    static func shuffled(count: Int, seed: UInt64) -> [Int] {
        var random = SplitMix64(seed: seed)
        return Array(0..<count).shuffled(using: &random)
    }
}
