#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether two byte buffers hold the same bytes, compared inline for the lengths keys
/// have: a `memcmp` call costs more than the compare itself for 30 bytes (a call through
/// the PLT and its set-up for long buffers), and a hit compares every key it finds.
@usableFromInline
enum ByteEquality {
    /// Up to this many bytes compare inline; longer buffers call `memcmp`.
    @inlinable static var inlineLimit: Int { 64 }

    @inlinable @inline(__always)
    static func equal(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Bool {
        let count = left.count
        guard count == right.count else { return false }
        guard count > 0, let leftStart = left.baseAddress, let rightStart = right.baseAddress else { return true }
        guard count <= inlineLimit else { return memcmp(leftStart, rightStart, count) == 0 }
        return equalInline(leftStart, rightStart, count: count)
    }

    /// `count` (1 ... `inlineLimit`) bytes compared with word loads; the last word of
    /// each range overlaps the one before it rather than loading bytes one at a time.
    @inlinable @inline(__always)
    static func equalInline(_ left: UnsafeRawPointer, _ right: UnsafeRawPointer, count: Int) -> Bool {
        if count >= 8 {
            var difference: UInt64 = 0
            var offset = 0
            while offset < count - 8 {
                difference |= left.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                    ^ right.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            difference |= left.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                ^ right.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            return difference == 0
        }
        if count >= 4 {
            let first = left.loadUnaligned(as: UInt32.self) ^ right.loadUnaligned(as: UInt32.self)
            let last = left.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
                ^ right.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            return first | last == 0
        }
        var difference: UInt8 = 0
        for offset in 0..<count {
            difference |= left.load(fromByteOffset: offset, as: UInt8.self) ^ right.load(fromByteOffset: offset, as: UInt8.self)
        }
        return difference == 0
    }
}
