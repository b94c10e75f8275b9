import Testing
@testable import KVCache

/// How a table stripe's dictionary places keys: strings by a seeded byte hash that
/// agrees with `==`, other keys as Swift does.
@Suite struct TableKeyTests {
    @Test func equalStringsArePlacedAlike() {
        let pairs = [("caf\u{E9}", "cafe\u{301}"), ("K", "\u{212A}"), ("plain", "plain")]
        for (left, right) in pairs {
            #expect(TableKey(left) == TableKey(right))
            for seed in [0, 1, -7, Int.max] {
                #expect(TableKey(left)._rawHashValue(seed: seed) == TableKey(right)._rawHashValue(seed: seed))
            }
            #expect(TableKey(left).hashValue == TableKey(right).hashValue)
        }
    }

    @Test func byteWiseKeysAreTheirBytes() {
        // The Cache's keys compare byte-wise: two spellings of "café" are two keys.
        let composed = TableKey(ByteWiseKey("caf\u{E9}")), decomposed = TableKey(ByteWiseKey("cafe\u{301}"))
        #expect(composed != decomposed)
        #expect(composed._rawHashValue(seed: 3) != decomposed._rawHashValue(seed: 3))
        #expect(composed._rawHashValue(seed: 3) == TableKey(ByteWiseKey("caf\u{E9}"))._rawHashValue(seed: 3))
    }

    /// Equality reads the bytes unless both sides are the same string value (one storage,
    /// or the same small string): long and short, shared and separately built, ASCII or not.
    @Test func byteWiseKeysAreEqualExactlyWhenTheirBytesAre() {
        for text in ["k", "café", "a key long enough to live in its own storage: \u{E9}"] {
            let shared = ByteWiseKey(text)
            let rebuilt = ByteWiseKey(String(decoding: Array(text.utf8), as: UTF8.self))
            #expect(shared == shared)
            #expect(shared == rebuilt)
            #expect(shared != ByteWiseKey(text + "x"))
            #expect(ByteWiseKey(String(text.dropLast()) + "?") != shared)
        }
        #expect(ByteWiseKey("caf\u{E9}") != ByteWiseKey("cafe\u{301}"))
    }

    @Test func otherKeysHashAsTheyDo() {
        for seed in [0, 42] {
            #expect(TableKey(12_345)._rawHashValue(seed: seed) == 12_345._rawHashValue(seed: seed))
        }
    }

    @Test func theTableSeedChangesThePlacement() {
        // The per-table seed is mixed in: a table's order is not its copy's.
        let key = TableKey("https://example.com/item/1/x")
        #expect(Set([0, 1, 2, 3].map { key._rawHashValue(seed: $0) }).count == 4)
    }

    @Test func similarKeysSpreadOverTheBuckets() {
        // 100,000 keys that differ in a few digits, into 131,072 buckets by the low bits,
        // as the dictionary places them: no bucket gets more than a handful, and about as
        // many stay empty as random placement leaves (131,072 × e^-0.763 ≈ 61,100).
        var buckets = [UInt8](repeating: 0, count: 1 << 17)
        for number in 0..<100_000 {
            let bucket = TableKey("item:\(number):suffix")._rawHashValue(seed: 0) & (buckets.count - 1)
            buckets[bucket] &+= 1
        }
        #expect(buckets.max()! <= 10)
        #expect(buckets.filter { $0 == 0 }.count < 62_000)
    }
}
