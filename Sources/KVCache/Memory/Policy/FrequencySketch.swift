/// How often each key was used lately, estimated in little memory: a count-min
/// sketch of four rows of counters that saturate at 15 (TinyLFU's). A key's
/// estimate is the least of its four counters. Once `sampleSize` uses have been
/// counted every counter is halved, so old popularity fades.
///
/// Keys come in as 32-bit hashes (`PolicyHash`), which keeps the rows' indices,
/// and so the estimates, the same in every run.
struct FrequencySketch {
    private static let seeds: (UInt32, UInt32, UInt32, UInt32) = (0x9E37_79B9, 0x85EB_CA6B, 0xC2B2_AE35, 0x27D4_EB2F)
    static let maximum: UInt8 = 15

    /// Four rows of `width` counters each, row after row.
    private var counters: [UInt8]
    private(set) var width: Int
    private var mask: UInt32
    /// Uses counted since the last halving (halved with the counters).
    private var additions = 0
    /// The entries the sketch is sized for.
    private(set) var capacity: Int
    /// Uses between two halvings: 10 × `capacity`.
    private(set) var sampleSize: Int

    /// A sketch for `capacity` entries: rows of twice the next power of two at or
    /// above the capacity (at least 16).
    init(capacity: Int) {
        var width = 1
        while width < max(16, capacity) { width *= 2 }
        self.width = width * 2
        mask = UInt32(self.width - 1)
        counters = Array(repeating: 0, count: 4 * self.width)
        self.capacity = capacity
        sampleSize = 10 * max(1, capacity)
    }

    /// The estimated recent uses of `hash`, at most 15.
    func frequency(_ hash: UInt32) -> UInt8 {
        counters.withUnsafeBufferPointer { counters in
            var least = counters[index(hash, Self.seeds.0)]
            least = min(least, counters[width + index(hash, Self.seeds.1)])
            least = min(least, counters[2 * width + index(hash, Self.seeds.2)])
            return min(least, counters[3 * width + index(hash, Self.seeds.3)])
        }
    }

    /// Counts one use of `hash`; halves every counter when the sample is full.
    mutating func increment(_ hash: UInt32) {
        let slots = (
            index(hash, Self.seeds.0), width + index(hash, Self.seeds.1),
            2 * width + index(hash, Self.seeds.2), 3 * width + index(hash, Self.seeds.3))
        let added = counters.withUnsafeMutableBufferPointer { counters in
            // `|` rather than `||`: every row is incremented.
            (Self.increment(&counters[slots.0]) | Self.increment(&counters[slots.1])
                | Self.increment(&counters[slots.2]) | Self.increment(&counters[slots.3])) != 0
        }
        guard added else { return }
        additions += 1
        if additions >= sampleSize { halve() }
    }

    /// Adds one to a counter below the maximum; 1 if it did, else 0.
    private static func increment(_ counter: inout UInt8) -> UInt8 {
        guard counter < maximum else { return 0 }
        counter += 1
        return 1
    }

    private mutating func halve() {
        counters.withUnsafeMutableBufferPointer { counters in
            for slot in counters.indices { counters[slot] >>= 1 }
        }
        additions /= 2
    }

    private func index(_ hash: UInt32, _ seed: UInt32) -> Int {
        var x = hash &* seed
        x ^= x >> 15
        x = x &* 0x2C1B_3C6D
        x ^= x >> 12
        return Int(x & mask)
    }
}
