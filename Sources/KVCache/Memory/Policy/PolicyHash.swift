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
        if let hash = ByteHash.hash(ofKey: key, start: ByteHash.unseededStart) { return Self.folded(hash) }
        if Key.self == Int.self { return Self.fold(unsafeBitCast(key, to: Int.self)) }
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

    /// The hash of a string's UTF-8 bytes as they are (the ``Cache``'s keys compare byte-wise).
    @inlinable
    static func bytes(_ string: String) -> UInt32 {
        folded(ByteHash.bytes(of: string, start: ByteHash.unseededStart))
    }

    /// The hash of `buffer`.
    @inlinable
    static func bytes(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        folded(ByteHash.hash(buffer, start: ByteHash.unseededStart))
    }

    /// 64 bits folded to 32.
    @inlinable
    static func folded(_ hash: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: hash) ^ UInt32(truncatingIfNeeded: hash >> 32)
    }
}
