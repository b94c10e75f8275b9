/// The 32-bit hash a key is counted under in the frequency sketch.
///
/// Swift's `hashValue` is seeded per process, which would make the policy's
/// choices differ from run to run; integers, strings (in Unicode normal form C, since
/// Swift compares strings canonically) and the ``Cache``'s byte-wise keys are hashed
/// here from their value instead. Other types fall back to `hashValue`. Keys that are
/// equal hash alike, which the table's stripes rely on.
@usableFromInline
struct PolicyHash<Key: Hashable> {
    @usableFromInline let seed: UInt32
    /// Whether `Key` is an integer type, decided once: a dynamic cast per hash would cost
    /// more than the hash. (`String`, `Int` and `ByteWiseKey` are told apart by their
    /// type first, which specialized code decides at compile time.)
    @usableFromInline let isInteger: Bool

    init(seed: UInt64) {
        self.seed = UInt32(truncatingIfNeeded: seed) ^ UInt32(truncatingIfNeeded: seed >> 32)
        isInteger = Key.self is any BinaryInteger.Type
    }

    @inlinable
    func hash(_ key: Key) -> UInt32 {
        seed ^ unseeded(key)
    }

    /// `key`'s hash before the seed is mixed in (it also chooses the key's table stripe).
    @inlinable
    func unseeded(_ key: Key) -> UInt32 {
        if Key.self == String.self { return Self.bytes(borrowing: key, as: String.self) }
        if Key.self == Int.self { return Self.fold(unsafeBitCast(key, to: Int.self)) }
        if Key.self == ByteWiseKey.self { return Self.bytes(unsafeBitCast(key, to: ByteWiseKey.self).string) }
        return isInteger ? Self.fold(Self.bits(of: key)) : Self.fold(key.hashValue)
    }

    /// The hash of a key whose unseeded hash is `unseeded`.
    @inlinable
    func seeded(_ unseeded: UInt32) -> UInt32 {
        seed ^ unseeded
    }

    /// The low bits of a key whose type is an integer type.
    @usableFromInline
    static func bits(of key: Key) -> Int {
        let integer = key as! any BinaryInteger
        return truncated(integer)
    }

    private static func truncated(_ integer: some BinaryInteger) -> Int {
        Int(truncatingIfNeeded: integer)
    }

    /// A value that fits in 32 bits is its own hash (negative ones as two's
    /// complement); a wider one is mixed down.
    @inlinable
    static func fold(_ value: Int) -> UInt32 {
        if Int(Int32(truncatingIfNeeded: value)) == value { return UInt32(truncatingIfNeeded: value) }
        var z = UInt64(bitPattern: Int64(value))
        z = (z ^ (z >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        z ^= z >> 33
        return UInt32(truncatingIfNeeded: z) ^ UInt32(truncatingIfNeeded: z >> 32)
    }

    /// `canonical` of a key whose type is `type`, read in place (a cast would copy, and
    /// retain, the key): ASCII bytes are hashed as they are.
    @inlinable
    static func bytes(borrowing key: Key, as type: String.Type) -> UInt32 {
        let ascii: UInt32? = withUnsafePointer(to: key) { pointer in
            UnsafeRawPointer(pointer).assumingMemoryBound(to: String.self).pointee.utf8
                .withContiguousStorageIfAvailable { utf8 -> UInt32? in
                    let buffer = UnsafeRawBufferPointer(utf8)
                    return isASCII(buffer) ? bytes(buffer) : nil
                } ?? nil
        }
        return ascii ?? canonical(unsafeBitCast(key, to: String.self))
    }

    /// The hash of the string's bytes in Unicode normal form C. Swift's strings are equal
    /// when canonically equivalent ("é" as one scalar or as "e" and an accent): their
    /// hashes must be too, or equal keys would land in different table stripes. ASCII
    /// is its own normal form.
    @usableFromInline
    static func canonical(_ string: String) -> UInt32 {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            var count = 0
            string._withNFCCodeUnits { byte in
                if count < buffer.count { buffer[count] = byte }
                count += 1
            }
            guard count <= buffer.count else { return string._nfcCodeUnits.withUnsafeBytes { bytes($0) } }
            return bytes(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[..<count])))
        }
    }

    /// Whether every byte is below 0x80, read as `bytes` reads them.
    @inlinable
    static func isASCII(_ buffer: UnsafeRawBufferPointer) -> Bool {
        let count = buffer.count
        var bits: UInt64 = 0
        if count >= 8 {
            var offset = 0
            while offset + 8 < count {
                bits |= buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            bits |= buffer.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else if count >= 4 {
            bits = UInt64(buffer.loadUnaligned(as: UInt32.self) | buffer.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
        } else {
            for index in 0..<count { bits |= UInt64(buffer[index]) }
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    /// The hash of the UTF-8 bytes as they are (the ``Cache``'s keys compare byte-wise).
    /// Native strings are read in place.
    @inlinable
    static func bytes(_ string: String) -> UInt32 {
        if let hash = string.utf8.withContiguousStorageIfAvailable({ bytes(UnsafeRawBufferPointer($0)) }) {
            return hash
        }
        var copy = string
        return copy.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
    }

    /// The bytes' hash, in the manner of wyhash: each 16 bytes but the last are folded
    /// in with one 64 × 64 → 128-bit multiply, the last 16 (read as two words that may
    /// overlap the ones before) with two more, and the length with them; fewer than 16
    /// bytes are read as overlapping words or halves. Three multiplies in a row for
    /// a 30-byte key, where a multiply per 8 bytes took five.
    @inlinable
    static func bytes(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        let count = buffer.count
        // wyhash's secrets; `start` is its seed set-up, `mix(0 ^ s0, s1)`, for seed 0.
        let s0: UInt64 = 0xA076_1D64_78BD_642F, s1: UInt64 = 0xE703_7ED1_A0B4_28DB
        var seed: UInt64 = 0x1FF5_C292_3A78_8D2C
        var a: UInt64 = 0, b: UInt64 = 0
        if count > 16 {
            var offset = 0
            while count - offset > 16 {
                seed = mix(buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ s1,
                           buffer.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self) ^ seed)
                offset += 16
            }
            a = buffer.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self)
            b = buffer.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else if count >= 8 {
            a = buffer.loadUnaligned(as: UInt64.self)
            b = buffer.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else if count >= 4 {
            a = UInt64(buffer.loadUnaligned(as: UInt32.self))
            b = UInt64(buffer.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
        } else if count > 0 {
            a = UInt64(buffer[0]) | UInt64(buffer[count / 2]) << 8 | UInt64(buffer[count - 1]) << 16
        }
        let (high, low) = (a ^ s1).multipliedFullWidth(by: b ^ seed)
        let hash = mix(low ^ s0 ^ UInt64(count), high ^ s1)
        return UInt32(truncatingIfNeeded: hash) ^ UInt32(truncatingIfNeeded: hash >> 32)
    }

    /// The xor of the halves of the 128-bit product.
    @inlinable
    static func mix(_ x: UInt64, _ y: UInt64) -> UInt64 {
        let (high, low) = x.multipliedFullWidth(by: y)
        return high ^ low
    }
}
