/// A fast hash of bytes, in the manner of wyhash: each 16 bytes but the last are
/// folded in with one 64 × 64 → 128-bit multiply, the last 16 (read as two words that
/// may overlap the ones before) with two more, and the length with them; fewer than
/// 16 bytes are read as overlapping words or halves. Three multiplies in a row for a
/// 30-byte key, where SipHash takes about 370 instructions.
///
/// Strings hash by `canonical`, which agrees with Swift's `==`: strings are equal when
/// canonically equivalent, so they are hashed in Unicode normal form C (ASCII, the
/// common case, is its own normal form and is hashed in place).
@usableFromInline
enum ByteHash {
    // wyhash's secrets.
    @inlinable static var secret0: UInt64 { 0xA076_1D64_78BD_642F }
    @inlinable static var secret1: UInt64 { 0xE703_7ED1_A0B4_28DB }

    /// The state seed 0 starts from, `start(seed: 0)`: the policy's hashes, the same
    /// in every process.
    @inlinable static var unseededStart: UInt64 { 0x1FF5_C292_3A78_8D2C }

    /// The state a seed starts from (wyhash's seed set-up).
    @inlinable
    static func start(seed: UInt64) -> UInt64 {
        seed ^ mix(seed ^ secret0, secret1)
    }

    /// The hash of `buffer` from the state `start`.
    @inlinable
    static func hash(_ buffer: UnsafeRawBufferPointer, start: UInt64) -> UInt64 {
        hash(buffer, start: start, orOfWords: nil)
    }

    /// The hash of `buffer`, or nil if some byte is not ASCII: the loads that hash the
    /// bytes read each of them, so the check costs an `or` per word.
    @inlinable
    static func hashIfASCII(_ buffer: UnsafeRawBufferPointer, start: UInt64) -> UInt64? {
        var bits: UInt64 = 0
        let hash = hash(buffer, start: start, orOfWords: &bits)
        return bits & 0x8080_8080_8080_8080 == 0 ? hash : nil
    }

    /// The hash; ors every word it loads into `orOfWords`, if given. (`hashPair`'s first
    /// chain: inlined, the second one's unused multiplies are dropped.)
    @inlinable @inline(__always)
    static func hash(_ buffer: UnsafeRawBufferPointer, start: UInt64, orOfWords: UnsafeMutablePointer<UInt64>?) -> UInt64 {
        hashPair(buffer, first: start, second: start, orOfWords: orOfWords).0
    }

    /// `hash(buffer, start: first)` and `hash(buffer, start: second)` in one pass: the
    /// loads are shared and the two chains of multiplies run side by side.
    @inlinable @inline(__always)
    static func hashPair(_ buffer: UnsafeRawBufferPointer, first: UInt64, second: UInt64,
                         orOfWords: UnsafeMutablePointer<UInt64>? = nil) -> (UInt64, UInt64) {
        let count = buffer.count
        var seed0 = first, seed1 = second
        var bits: UInt64 = 0
        var a: UInt64 = 0, b: UInt64 = 0
        if count > 16 {
            var offset = 0
            while count - offset > 16 {
                let word0 = buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                let word1 = buffer.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
                bits |= word0 | word1
                seed0 = mix(word0 ^ secret1, word1 ^ seed0)
                seed1 = mix(word0 ^ secret1, word1 ^ seed1)
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
        orOfWords?.pointee = bits | a | b
        let (high0, low0) = (a ^ secret1).multipliedFullWidth(by: b ^ seed0)
        let (high1, low1) = (a ^ secret1).multipliedFullWidth(by: b ^ seed1)
        return (mix(low0 ^ secret0 ^ UInt64(count), high0 ^ secret1), mix(low1 ^ secret0 ^ UInt64(count), high1 ^ secret1))
    }

    /// `hash(ofKey:start:)` from two starts in one pass; nil where that is nil, and for a
    /// `String` key that is not ASCII (hashed in normal form C, once per start).
    @inlinable @inline(__always)
    static func hashPair<Key>(ofKey key: Key, first: UInt64, second: UInt64) -> (UInt64, UInt64)? {
        guard Key.self == String.self || Key.self == ByteWiseKey.self else { return nil }
        return withUnsafePointer(to: key) { pointer in
            let string = UnsafeRawPointer(pointer).assumingMemoryBound(to: String.self)
            let pair: (UInt64, UInt64)?? = string.pointee.utf8.withContiguousStorageIfAvailable { utf8 in
                var bits: UInt64 = 0
                let pair = hashPair(UnsafeRawBufferPointer(utf8), first: first, second: second, orOfWords: &bits)
                // Byte-wise keys hash their bytes as they are; strings, ASCII ones only.
                return Key.self == ByteWiseKey.self || bits & 0x8080_8080_8080_8080 == 0 ? pair : nil
            }
            if let pair, let pair { return pair }
            guard let firstHash = hash(ofKey: key, start: first), let secondHash = hash(ofKey: key, start: second) else { return nil }
            return (firstHash, secondHash)
        }
    }

    /// The xor of the halves of the 128-bit product.
    @inlinable
    static func mix(_ x: UInt64, _ y: UInt64) -> UInt64 {
        let (high, low) = x.multipliedFullWidth(by: y)
        return high ^ low
    }

    /// The hash of the string `string` points to, consistent with `==`, read in place.
    @inlinable
    static func canonical(_ string: UnsafePointer<String>, start: UInt64) -> UInt64 {
        let ascii: UInt64? = string.pointee.utf8.withContiguousStorageIfAvailable { utf8 in
            hashIfASCII(UnsafeRawBufferPointer(utf8), start: start)
        } ?? nil
        return ascii ?? canonical(string.pointee, start: start)
    }

    /// The hash of the string's bytes in normal form C.
    @usableFromInline
    static func canonical(_ string: String, start: UInt64) -> UInt64 {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            var count = 0
            string._withNFCCodeUnits { byte in
                if count < buffer.count { buffer[count] = byte }
                count += 1
            }
            guard count <= buffer.count else { return string._nfcCodeUnits.withUnsafeBytes { hash($0, start: start) } }
            return hash(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[..<count])), start: start)
        }
    }

    /// The hash of a `String` key (consistent with `==`) or a ``ByteWiseKey`` (its bytes
    /// as they are), read in place: a cast would copy, and retain, the key. Nil for
    /// keys of other types. The policy's hash and the table's both come from here.
    @inlinable
    static func hash<Key>(ofKey key: Key, start: UInt64) -> UInt64? {
        guard Key.self == String.self || Key.self == ByteWiseKey.self else { return nil }
        return withUnsafePointer(to: key) { pointer in
            // A `ByteWiseKey` is a string: the same layout.
            let string = UnsafeRawPointer(pointer).assumingMemoryBound(to: String.self)
            return Key.self == ByteWiseKey.self ? bytes(of: string, start: start) : canonical(string, start: start)
        }
    }

    /// The hash of the UTF-8 bytes, as they are, of the string `string` points to (for
    /// keys that compare byte-wise), read in place.
    @inlinable
    static func bytes(of string: UnsafePointer<String>, start: UInt64) -> UInt64 {
        if let hash = string.pointee.utf8.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0), start: start) }) {
            return hash
        }
        var copy = string.pointee
        return copy.withUTF8 { hash(UnsafeRawBufferPointer($0), start: start) }
    }

    /// The hash of a string's UTF-8 bytes as they are.
    @inlinable
    static func bytes(of string: String, start: UInt64) -> UInt64 {
        withUnsafePointer(to: string) { bytes(of: $0, start: start) }
    }
}
