/// A count-min sketch of 4-bit counters (0...15) with aging, as TinyLFU's (Einziger,
/// Friedman and Manes, "TinyLFU: A Highly Efficient Cache Admission Policy"): four
/// rows of counters, a key's estimate the least of its four counters. Every
/// `sampleSize` recorded accesses (10 × the cache's entries) each counter is
/// halved, so old popularity fades. Deterministic: the row hashes are fixed.
struct FrequencySketch {
    private static let rows = 4
    private static let seeds: [UInt64] = [0x9E37_79B9_7F4A_7C15, 0xC2B2_AE3D_27D4_EB4F,
                                          0x1656_67B1_9E37_79F9, 0x27D4_EB2F_1656_67C5]
    static let maximum: UInt8 = 15

    private var counters: [UInt8]
    private let rowMask: Int
    private let rowWidth: Int
    let sampleSize: Int
    private(set) var additions = 0

    /// Sized for a cache of `capacity` entries: four rows of the next power of two
    /// above 4 × capacity counters (16 counters per entry, as Caffeine's sketch).
    init(capacity: Int) {
        var width = 16
        while width < 4 * max(1, capacity) { width <<= 1 }
        rowWidth = width
        rowMask = width - 1
        counters = Array(repeating: 0, count: Self.rows * width)
        sampleSize = 10 * max(1, capacity)
    }

    /// The estimated number of recent accesses of `key`, at most 15.
    func frequency(_ key: Int) -> UInt8 {
        var least = Self.maximum
        for row in 0..<Self.rows { least = min(least, counters[index(key, row)]) }
        return least
    }

    /// Records one access of `key`; halves every counter when the sample is full.
    mutating func increment(_ key: Int) {
        for row in 0..<Self.rows {
            let slot = index(key, row)
            if counters[slot] < Self.maximum { counters[slot] += 1 }
        }
        additions += 1
        if additions >= sampleSize { age() }
    }

    private mutating func age() {
        for slot in counters.indices { counters[slot] >>= 1 }
        additions /= 2
    }

    private func index(_ key: Int, _ row: Int) -> Int {
        // SplitMix64's finalizer over the key mixed with the row's seed.
        var z = UInt64(bitPattern: Int64(key)) &+ Self.seeds[row]
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return row * rowWidth + Int(truncatingIfNeeded: z) & rowMask
    }
}
