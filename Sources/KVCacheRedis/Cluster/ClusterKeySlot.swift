import Foundation

/// Redis Cluster's key slots: CRC16 (XMODEM) of the key, or of its hash tag (the text
/// between the first `{` and the next `}`, when not empty), modulo 16,384.
enum ClusterKeySlot {
    static let count = 16_384

    /// The slot of `key`.
    static func slot(of key: Data) -> Int {
        key.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            var end = bytes.count
            if let open = bytes.firstIndex(of: UInt8(ascii: "{")),
               let close = bytes[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1 {
                start = open + 1
                end = close
            }
            return Int(crc16(UnsafeBufferPointer(rebasing: bytes[start..<end])) & 0x3FFF)
        }
    }

    /// CRC-16/XMODEM (polynomial 0x1021, initial 0), as Redis computes it.
    static func crc16(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
        }
        return crc
    }

    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 {
            crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
        }
        return crc
    }
}
