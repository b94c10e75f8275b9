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
    static let version: UInt8 = 1
    static let headerSize = 14

    static func encode(_ entry: RemoteEntry, deadline: Double?) -> Data {
        var data = Data(capacity: headerSize + entry.data.count)
        data.append(contentsOf: magic)
        data.append(version)
        data.append(0)
        var milliseconds = (deadline.map { Int64(($0 * 1000).rounded(.up)) } ?? 0).littleEndian
        withUnsafeBytes(of: &milliseconds) { data.append(contentsOf: $0) }
        data.append(entry.data)
        return data
    }

    /// The entry in `data`; throws `.unexpectedReply` for bytes this format did not write.
    static func decode(_ data: Data) throws -> (data: Data, deadline: Double?) {
        guard data.count >= headerSize else {
            throw RemoteLevelError(.unexpectedReply, "a value of \(data.count) bytes has no KVCache header")
        }
        let start = data.startIndex
        guard data[start..<start + 4].elementsEqual(magic) else {
            throw RemoteLevelError(.unexpectedReply, "the value was not written by KVCache")
        }
        guard data[start + 4] == version else {
            throw RemoteLevelError(.unexpectedReply, "the value has format version \(data[start + 4]); this one reads \(version)")
        }
        var milliseconds: Int64 = 0
        for (index, byte) in data[start + 6..<start + 14].enumerated() {
            milliseconds |= Int64(byte) << (8 * Int64(index))
        }
        let deadline = milliseconds == 0 ? nil : Double(milliseconds) / 1000
        return (data.subdata(in: start + headerSize..<data.endIndex), deadline)
    }
}
