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

    /// `<hash of key>-<random>`, both as 16 lowercase hex digits. Never derived
    /// from the raw key, so no key can name a path outside the data folder.
    static func fileName(forKey key: String) -> String {
        hex(fnv1a64(key)) + "-" + hex(UInt64.random(in: .min ... .max))
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
