/// How often each key was used lately, estimated in little memory: a count-min
/// sketch of 4-bit counters that saturate at 15 (TinyLFU's). A key's estimate is the
/// least of its four counters. Once `sampleSize` uses have been counted every counter
/// is halved, so old popularity fades.
///
/// A key's four counters lie in one 64-byte block (as Caffeine's sketch), so counting
/// a use or reading an estimate touches one cache line: the block is chosen by one
/// hash of the key, and each counter within its quarter of the block by another.
/// There are 8 counters per entry of capacity (4 bytes), and at least 2^18 counters
/// (128 KB): below 32,768 entries a wider sketch than that confuses fewer keys, which
/// is worth up to a point of hit ratio on the shared traces (docs/memory-policy-research.md).
///
/// Keys come in as 32-bit hashes (`PolicyHash`), which keeps the estimates the same
/// in every run.
///
/// The counters are memory the sketch points to, so counting a use costs no
/// uniqueness check: copies of a sketch share its counters. The policy keeps one
/// sketch and replaces it (never copies it) to grow it.
@usableFromInline
struct FrequencySketch {
    @usableFromInline static var maximum: UInt64 { 15 }
    /// Words (of 16 counters) per block: 64 bytes.
    @usableFromInline static var blockWords: Int { 8 }

    /// Owns the counters' memory.
    @usableFromInline let storage: Counters
    /// `storage`'s words.
    @usableFromInline let words: UnsafeMutablePointer<UInt64>
    @usableFromInline let blockMask: UInt32
    /// Uses counted since the last halving (halved with the counters).
    @usableFromInline var additions = 0
    /// The entries the sketch is sized for.
    @usableFromInline let capacity: Int
    /// Uses between two halvings: 10 × `capacity`.
    @usableFromInline let sampleSize: Int
    /// Changes whenever a counter may have gone down (each halving; a new sketch
    /// continues its predecessor's), so that a caller that saw a key's counters at
    /// the maximum knows they still are while the epoch is the same.
    @usableFromInline private(set) var epoch: UInt64

    /// Counters a sketch has at least.
    static var minimumCounters: Int { 1 << 18 }

    /// A sketch for `capacity` entries: 8 counters for each entry of the next power
    /// of two at or above the capacity, at least `minimumCounters`. A capacity of 0
    /// gives a placeholder of one block, for a cache that counts nothing yet. `epoch`
    /// continues the sketch this one replaces (its epoch + 1).
    init(capacity: Int, epoch: UInt64 = 0) {
        var entries = 16
        while entries < capacity { entries *= 2 }
        let blocks = capacity == 0 ? 1 : max(entries * 8, Self.minimumCounters) / 128
        storage = Counters(count: blocks * Self.blockWords)
        words = storage.words
        blockMask = UInt32(blocks - 1)
        self.capacity = capacity
        sampleSize = 10 * max(1, capacity)
        self.epoch = epoch
    }

    /// The estimated recent uses of `hash`, at most 15.
    @inlinable
    func frequency(_ hash: UInt32) -> UInt8 {
        let (block, offsets) = locate(hash)
        var least = Self.maximum
        for row in 0..<4 {
            let (word, shift) = Self.counter(row, block: block, offsets: offsets)
            least = min(least, (words[word] &>> shift) & 15)
        }
        return UInt8(least)
    }

    /// Counts one use of `hash`; halves every counter when the sample is full. Returns
    /// false if all of the key's counters were at the maximum (nothing changed): they
    /// stay there until `epoch` changes.
    @inlinable @discardableResult
    mutating func increment(_ hash: UInt32) -> Bool {
        let (block, offsets) = locate(hash)
        // Unrolled and without branches: the loop's checks cost more than its work, and
        // whether a counter is saturated is a coin toss for a branch predictor.
        let added = add(row: 0, block: block, offsets: offsets)
            | add(row: 1, block: block, offsets: offsets)
            | add(row: 2, block: block, offsets: offsets)
            | add(row: 3, block: block, offsets: offsets)
        additions &+= Int(added)
        if additions >= sampleSize { halve() }
        return added != 0
    }

    /// Adds one to a row's counter unless it is at the maximum; returns 1 if it added, else 0.
    @inlinable
    func add(row: Int, block: Int, offsets: UInt32) -> UInt64 {
        let (word, shift) = Self.counter(row, block: block, offsets: offsets)
        let value = words[word]
        let below = (((value &>> shift) & 15) &+ 1) &>> 4 ^ 1
        words[word] = value &+ (below &<< shift)
        return below
    }

    /// The address of `hash`'s block.
    @inlinable
    func block(_ hash: UInt32) -> UnsafeRawPointer {
        UnsafeRawPointer(words + locate(hash).block)
    }

    @usableFromInline
    mutating func halve() {
        for index in 0..<(Int(blockMask) + 1) * Self.blockWords { words[index] = (words[index] >> 1) & 0x7777_7777_7777_7777 }
        additions /= 2
        epoch &+= 1
    }

    /// The first word of the key's block, and 32 bits that place its counters in it.
    @inlinable
    func locate(_ hash: UInt32) -> (block: Int, offsets: UInt32) {
        (Int(Self.mix(hash, 0x9E37_79B9) & blockMask) * Self.blockWords, Self.mix(hash, 0x85EB_CA6B))
    }

    /// Row `row`'s counter: one of the 32 in the row's two words of the block.
    @inlinable
    static func counter(_ row: Int, block: Int, offsets: UInt32) -> (word: Int, shift: UInt64) {
        let bits = offsets &>> UInt32(truncatingIfNeeded: row &* 8)
        return (block &+ row &* 2 &+ Int(bits & 1), UInt64((bits &>> 1) & 15) &* 4)
    }

    @inlinable
    static func mix(_ hash: UInt32, _ seed: UInt32) -> UInt32 {
        var x = hash &* seed
        x ^= x >> 15
        x = x &* 0x2C1B_3C6D
        x ^= x >> 12
        return x
    }
}

extension FrequencySketch {
    /// The memory of a sketch's counters, zeroed, freed with the last sketch that shares it.
    @usableFromInline
    final class Counters {
        @usableFromInline let words: UnsafeMutablePointer<UInt64>

        /// Aligned to a block, so that a block is one cache line, not parts of two.
        init(count: Int) {
            words = UnsafeMutableRawPointer.allocate(
                byteCount: count * MemoryLayout<UInt64>.stride, alignment: FrequencySketch.blockWords * 8
            ).bindMemory(to: UInt64.self, capacity: count)
            words.initialize(repeating: 0, count: count)
        }

        deinit { words.deallocate() }
    }
}
