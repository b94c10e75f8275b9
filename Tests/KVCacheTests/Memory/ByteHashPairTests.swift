import Testing
@testable import KVCache

/// A key's two hashes taken in one pass equal each taken alone, and the inline byte
/// comparison that finds keys agrees with the bytes.
@Suite struct ByteHashPairTests {
    @Test func onePassGivesEachHashOfEveryLength() {
        let starts: (UInt64, UInt64) = (ByteHash.unseededStart, tableHashStart)
        for length in 0...100 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            bytes.withUnsafeBytes { buffer in
                let pair = ByteHash.hashPair(buffer, first: starts.0, second: starts.1)
                #expect(pair.0 == ByteHash.hash(buffer, start: starts.0), "length \(length)")
                #expect(pair.1 == ByteHash.hash(buffer, start: starts.1), "length \(length)")
            }
        }
    }

    @Test func theHashOfBytesIsTheOneThePolicyHasAlwaysUsed() {
        // From an independent implementation of the hash (wyhash's steps as `ByteHash`
        // documents them): the policy's hashes must not change between versions, or the
        // pinned trace hits would mean something else.
        let known: [(String, UInt64)] = [
            ("", 0x0409_638E_E2BD_E459), ("a", 0x28D2_0533_09D2_8531), ("abcd", 0x4CB5_995F_7074_28F5),
            ("https://origin.test/item/12345", 0x3123_95DE_DE81_29D9), (String(repeating: "x", count: 100), 0x1586_CF9C_6E8A_F471),
        ]
        for (text, hash) in known {
            Array(text.utf8).withUnsafeBytes { bytes in
                #expect(ByteHash.hash(bytes, start: ByteHash.unseededStart) == hash, "\(text.prefix(12))")
                let pair = ByteHash.hashPair(bytes, first: tableHashStart, second: ByteHash.unseededStart)
                #expect(pair.1 == hash, "\(text.prefix(12))")
            }
        }
    }

    @Test func aKeysHashesAreTheOnesEachPartComputes() throws {
        let storage = try MemoryCache<String, Int>(configuration: .init(countLimit: 10)).storage
        let byteWise = try MemoryCache<ByteWiseKey, Int>(configuration: .init(countLimit: 10)).storage
        let keys = ["", "a", "short key", "https://origin.test/item/12345", String(repeating: "long key ", count: 30),
                    "caf\u{E9}", "cafe\u{301}", "\u{212B}ngstr\u{F6}m, not ASCII, and longer than sixteen bytes"]
        for key in keys {
            let hashes = storage.hashes(of: key, withPolicyHash: true)
            #expect(hashes.policy == storage.stripeHash.unseeded(key), "\(key.debugDescription)")
            #expect(hashes.table == storage.tableHash(of: key), "\(key.debugDescription)")
            #expect(storage.hashes(of: key, withPolicyHash: false).policy == 0)
            let wrapped = ByteWiseKey(key)
            let byteHashes = byteWise.hashes(of: wrapped, withPolicyHash: true)
            #expect(byteHashes.policy == byteWise.stripeHash.unseeded(wrapped), "\(key.debugDescription)")
            #expect(byteHashes.table == byteWise.tableHash(of: wrapped), "\(key.debugDescription)")
        }
        // Canonically equivalent strings are one `String` key, so they hash alike.
        #expect(storage.hashes(of: "caf\u{E9}", withPolicyHash: true) == storage.hashes(of: "cafe\u{301}", withPolicyHash: true))
    }

    @Test func bytesCompareEqualOnlyWhenEveryByteIs() {
        for length in 0...150 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 7) }
            bytes.withUnsafeBytes { left in
                Array(bytes).withUnsafeBytes { right in #expect(ByteEquality.equal(left, right), "length \(length)") }
                for position in 0..<length {
                    var changed = bytes
                    changed[position] ^= 0x01
                    changed.withUnsafeBytes { right in
                        #expect(!ByteEquality.equal(left, right), "length \(length), byte \(position)")
                    }
                }
                (bytes + [0]).withUnsafeBytes { longer in
                    #expect(!ByteEquality.equal(left, longer), "length \(length) against one more")
                }
            }
        }
    }
}
