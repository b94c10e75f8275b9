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

    @inlinable @inline(__always)
    static func bytesEqual(_ lhs: String, _ rhs: String) -> Bool {
        // Native strings (all keys in practice) compare in place.
        let compared = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in
                ByteEquality.equal(UnsafeRawBufferPointer(left), UnsafeRawBufferPointer(right))
            }
        }
        if let compared, let compared { return compared }
        return lhs.utf8.elementsEqual(rhs.utf8)
    }

    /// Whether `string`'s UTF-8 bytes are `bytes`.
    @inlinable @inline(__always)
    static func bytesEqual(_ string: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        if let equal = string.utf8.withContiguousStorageIfAvailable({ ByteEquality.equal(UnsafeRawBufferPointer($0), bytes) }) {
            return equal
        }
        return string.utf8.elementsEqual(bytes)
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
