import Foundation

/// A value that proves its own integrity: the sequence number of the write that
/// made it, the key it was written for, a payload derived from both, and a
/// checksum over everything. The test worker writes such values and the tests
/// decode them: a torn, mixed-up or misplaced value fails to decode.
///
/// ```
/// seq UInt64 LE | key length UInt16 LE | key UTF-8 | payload words | checksum UInt64 LE of all before
/// ```
public enum CheckedValue {
    public static func minimumSize(forKey key: String) -> Int { 8 + 2 + key.utf8.count + 8 }

    /// A value of `size` bytes (at least `minimumSize(forKey:)`).
    public static func make(key: String, seq: UInt64, size: Int) -> Data {
        let keyBytes = Array(key.utf8)
        let size = max(size, minimumSize(forKey: key))
        var data = Data(count: size)
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            buffer.storeBytes(of: seq.littleEndian, toByteOffset: 0, as: UInt64.self)
            buffer.storeBytes(of: UInt16(keyBytes.count).littleEndian, toByteOffset: 8, as: UInt16.self)
            for (index, byte) in keyBytes.enumerated() { buffer[10 + index] = byte }
            let start = 10 + keyBytes.count
            let body = size - 8
            // Word by word: fast enough in debug builds for values of 100 KB.
            var offset = start
            while offset + 8 <= body {
                buffer.storeBytes(of: patternWord(seq: seq, offset: offset), toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            while offset < body {
                buffer[offset] = UInt8(truncatingIfNeeded: patternWord(seq: seq, offset: offset))
                offset += 1
            }
            let checksum = self.checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<body]))
            buffer.storeBytes(of: checksum.littleEndian, toByteOffset: body, as: UInt64.self)
        }
        return data
    }

    /// The sequence number if `data` is an intact value written for `key`, else nil.
    public static func seq(of data: Data, key: String) -> UInt64? {
        let keyBytes = Array(key.utf8)
        guard data.count >= minimumSize(forKey: key) else { return nil }
        return data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) -> UInt64? in
            let body = buffer.count - 8
            let stored = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: body, as: UInt64.self))
            guard checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<body])) == stored else { return nil }
            let seq = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
            let length = UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
            guard Int(length) == keyBytes.count, buffer[10..<(10 + keyBytes.count)].elementsEqual(keyBytes) else {
                return nil
            }
            var offset = 10 + keyBytes.count
            while offset + 8 <= body {
                if buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != patternWord(seq: seq, offset: offset) {
                    return nil
                }
                offset += 8
            }
            while offset < body {
                if buffer[offset] != UInt8(truncatingIfNeeded: patternWord(seq: seq, offset: offset)) { return nil }
                offset += 1
            }
            return seq
        }
    }

    /// The payload word at byte `offset` of the value written with `seq`.
    static func patternWord(seq: UInt64, offset: Int) -> UInt64 {
        (seq &+ UInt64(offset)) &* 0x9e37_79b9_7f4a_7c15
    }

    /// FNV-1a style over 8-byte words, then the tail bytes.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var offset = 0
        while offset + 8 <= bytes.count {
            hash ^= bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            hash = hash &* 0x0000_0100_0000_01b3
            offset += 8
        }
        while offset < bytes.count {
            hash ^= UInt64(bytes[offset])
            hash = hash &* 0x0000_0100_0000_01b3
            offset += 1
        }
        return hash
    }
}
