/// FNV-1a, 64-bit: a small, fast, non-cryptographic hash of a key's UTF-8 bytes.
/// It only spreads file names; uniqueness comes from the random suffix.
enum FileNameHash {
    static func fnv1a64(_ string: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in string.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// `<hash of key>-<suffix>`, both as 16 lowercase hex digits. Never derived
    /// from the raw key, so no key can name a path outside the data folder.
    static func fileName(forKey key: String, suffix: UInt64) -> String {
        // Encoded straight into the string's storage: every file set makes a name,
        // and `String(_:radix:)` plus padding cost about a microsecond.
        String(unsafeUninitializedCapacity: 33) { buffer in
            encode(fnv1a64(key), into: buffer, at: 0)
            buffer[16] = UInt8(ascii: "-")
            encode(suffix, into: buffer, at: 17)
            return 33
        }
    }

    /// True for a name that `fileName(forKey:suffix:)` could have made: the only
    /// files in the data folder the store reads as its own or deletes.
    static func isFileName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard bytes.count == 33 else { return false }
        for (index, byte) in bytes.enumerated() {
            if index == 16 {
                if byte != UInt8(ascii: "-") { return false }
            } else if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                        && !(UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) {
                return false
            }
        }
        return true
    }

    /// `value` as 16 lowercase hex digits.
    static func hex(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            encode(value, into: buffer, at: 0)
            return 16
        }
    }

    private static func encode(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        for index in 0..<16 {
            let nibble = UInt8(truncatingIfNeeded: value >> (60 - 4 * UInt64(index))) & 0xf
            buffer[start + index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
        }
    }
}

/// Suffixes for new file names: SplitMix64 over a counter that starts at a random
/// seed. Distinct within a store (the mix is a bijection of the counter), random
/// across processes (their seeds), and one `getrandom` per store instead of one per
/// file written. Collisions with another process's names are as unlikely as with
/// fresh random numbers, and `O_EXCL` catches them anyway.
struct FileNameSuffixes {
    private var state = UInt64.random(in: .min ... .max)

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
