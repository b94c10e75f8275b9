#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A key that compares and hashes by its UTF-8 bytes, as SQLite compares TEXT.
///
/// This is the library's one definition of key identity. Swift's `String ==`
/// treats canonically equivalent spellings as equal ("é" as one scalar and as
/// "e" + U+0301), while the manifest keeps them as two keys. Everything keyed
/// by a cache key uses this type so that a key means the same thing in every
/// level and buffer: the disk level's write and access-time buffers, and the
/// facade's memory level, pending background writes and loads.
///
/// Wrapping costs nothing (no copy, no allocation), so a memory hit stays cheap.
@usableFromInline
struct ByteWiseKey: Hashable, Sendable {
    @usableFromInline let string: String

    @inlinable
    init(_ string: String) { self.string = string }

    // Inlinable with the identity test first: a look-up usually compares the key with the
    // very string it was stored as, and then neither key is retained nor read.
    @inlinable
    static func == (lhs: ByteWiseKey, rhs: ByteWiseKey) -> Bool {
        if unsafeBitCast(lhs.string, to: (UInt64, UInt64).self) == unsafeBitCast(rhs.string, to: (UInt64, UInt64).self) {
            return true
        }
        return bytesEqual(lhs.string, rhs.string)
    }

    @usableFromInline
    static func bytesEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8, right = rhs.utf8
        guard left.count == right.count else { return false }
        // Native strings (all keys in practice) compare with one memcmp.
        let compared = left.withContiguousStorageIfAvailable { left in
            right.withContiguousStorageIfAvailable { right in
                left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
        if let compared, let compared { return compared }
        return left.elementsEqual(right)
    }

    /// Whether `string`'s UTF-8 bytes are `bytes`.
    @inlinable
    static func bytesEqual(_ string: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let utf8 = string.utf8
        guard utf8.count == bytes.count else { return false }
        guard let start = bytes.baseAddress else { return true }
        if let equal = utf8.withContiguousStorageIfAvailable({ memcmp($0.baseAddress!, start, $0.count) == 0 }) {
            return equal
        }
        return utf8.elementsEqual(bytes)
    }

    @usableFromInline
    func hash(into hasher: inout Hasher) {
        // Same bytes either way, so the hash does not depend on the string's storage.
        if string.utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            var copy = string
            copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }
}
