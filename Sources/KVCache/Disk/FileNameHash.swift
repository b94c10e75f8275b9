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
        hex(fnv1a64(key)) + "-" + hex(suffix)
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
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
