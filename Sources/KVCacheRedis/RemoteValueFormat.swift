import Foundation
import KVCache

/// The bytes a `RedisLevel` stores for a value: a 14-byte header, then the value.
///
/// | bytes | what |
/// |---|---|
/// | 0–3 | `KVCR` |
/// | 4 | format version (1) |
/// | 5 | flags (0) |
/// | 6–13 | expiration, milliseconds since 1970, little-endian (0: never) |
///
/// A node reading bytes with another magic or version (another program's key, a later
/// format) treats them as a miss and counts an error, never as a value.
enum RemoteValueFormat {
    static let magic: [UInt8] = Array("KVCR".utf8)
    /// The magic as the first four bytes read as a little-endian `UInt32`.
    private static let magicWord = UInt32(littleEndian: 0x5243_564B)
    static let version: UInt8 = 1
    static let headerSize = 14

    /// The stored bytes for `entry`, in a new `Data`.
    static func encode(_ entry: RemoteEntry, deadline: Double?) -> Data {
        let count = headerSize + entry.data.count
        var data = Data(count: count)
        data.withUnsafeMutableBytes { encode(entry, deadline: deadline, into: $0) }
        return data
    }

    /// Writes the stored bytes for `entry` at the start of `buffer` (at least
    /// `headerSize + entry.data.count` bytes).
    static func encode(_ entry: RemoteEntry, deadline: Double?, into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= headerSize + entry.data.count)
        let milliseconds = deadline.map { Int64(($0 * 1000).rounded(.up)) } ?? 0
        buffer.storeBytes(of: magicWord, toByteOffset: 0, as: UInt32.self)
        buffer[4] = version
        buffer[5] = 0
        buffer.storeBytes(of: milliseconds.littleEndian, toByteOffset: 6, as: Int64.self)
        entry.data.withUnsafeBytes { value in
            if let source = value.baseAddress, value.count > 0 {
                (buffer.baseAddress! + headerSize).copyMemory(from: source, byteCount: value.count)
            }
        }
    }

    /// The value and deadline in `bytes`, with the value copied once; nil for bytes this
    /// format did not write (`decode(_:)` says why).
    static func decode(_ bytes: UnsafeRawBufferPointer) -> (data: Data, deadline: Double?)? {
        guard let deadline = deadline(ofValueIn: bytes) else { return nil }
        return (Data(UnsafeRawBufferPointer(rebasing: bytes[headerSize...])), deadline)
    }

    /// The deadline in the header of `bytes` (`.some(nil)`: never expires); nil for bytes
    /// this format did not write.
    static func deadline(ofValueIn bytes: UnsafeRawBufferPointer) -> Double?? {
        guard bytes.count >= headerSize,
              bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self) == magicWord,
              bytes[4] == version else { return nil }
        let milliseconds = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 6, as: Int64.self))
        return .some(milliseconds == 0 ? nil : Double(milliseconds) / 1000)
    }

    /// The entry in `data`; throws `.unexpectedReply` for bytes this format did not write.
    static func decode(_ data: Data) throws -> (data: Data, deadline: Double?) {
        if let decoded = data.withUnsafeBytes({ decode($0) }) { return decoded }
        throw notAValue(data)
    }

    /// Why `data`, which `decode` refused, is not a value of this format.
    static func notAValue(_ data: Data) -> RemoteLevelError {
        let message: String
        if data.count < headerSize {
            message = "a value of \(data.count) bytes has no KVCache header"
        } else if !data.prefix(4).elementsEqual(magic) {
            message = "the value was not written by KVCache"
        } else {
            message = "the value has format version \(data[data.startIndex + 4]); this one reads \(version)"
        }
        return RemoteLevelError(.unexpectedReply, message)
    }
}
