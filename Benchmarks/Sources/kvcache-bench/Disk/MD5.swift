#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// MD5 (RFC 1321), only to name files the way SDWebImage and Kingfisher do;
/// written here so the benchmarks need no crypto dependency.
enum MD5 {
    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]

    /// floor(abs(sin(i + 1)) * 2^32)
    private static let constants: [UInt32] = (0..<64).map { index in
        UInt32(truncatingIfNeeded: Int64(abs(sin(Double(index + 1))) * 4_294_967_296.0))
    }

    static func digest<Bytes: Collection<UInt8>>(_ input: Bytes) -> [UInt8] {
        var message = Array(input)
        let bitLength = UInt64(message.count) &* 8
        message.append(0x80)
        while message.count % 64 != 56 { message.append(0) }
        for byte in 0..<8 { message.append(UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(byte)))) }

        var a0: UInt32 = 0x6745_2301, b0: UInt32 = 0xEFCD_AB89
        var c0: UInt32 = 0x98BA_DCFE, d0: UInt32 = 0x1032_5476
        var words = [UInt32](repeating: 0, count: 16)
        for chunk in stride(from: 0, to: message.count, by: 64) {
            for index in 0..<16 {
                let base = chunk + index * 4
                words[index] = UInt32(message[base]) | UInt32(message[base + 1]) << 8
                    | UInt32(message[base + 2]) << 16 | UInt32(message[base + 3]) << 24
            }
            var a = a0, b = b0, c = c0, d = d0
            for step in 0..<64 {
                var f: UInt32
                let g: Int
                switch step {
                case 0..<16: f = (b & c) | (~b & d); g = step
                case 16..<32: f = (d & b) | (~d & c); g = (5 * step + 1) % 16
                case 32..<48: f = b ^ c ^ d; g = (3 * step + 5) % 16
                default: f = c ^ (b | ~d); g = (7 * step) % 16
                }
                f = f &+ a &+ constants[step] &+ words[g]
                a = d
                d = c
                c = b
                b = b &+ ((f << shifts[step]) | (f >> (32 - shifts[step])))
            }
            a0 = a0 &+ a; b0 = b0 &+ b; c0 = c0 &+ c; d0 = d0 &+ d
        }
        var result: [UInt8] = []
        result.reserveCapacity(16)
        for word in [a0, b0, c0, d0] {
            for byte in 0..<4 { result.append(UInt8(truncatingIfNeeded: word >> (8 * UInt32(byte)))) }
        }
        return result
    }

    /// The 32-character lowercase hex digest of a string's UTF-8 bytes.
    static func hex(_ string: String) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for byte in digest(string.utf8) {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Checks the RFC 1321 test vectors; the benchmark refuses to run if they fail.
    static func selfTest() -> Bool {
        hex("") == "d41d8cd98f00b204e9800998ecf8427e"
            && hex("abc") == "900150983cd24fb0d6963f7d28e17f72"
            && hex("The quick brown fox jumps over the lazy dog") == "9e107d9d372bb6826bd81d3542a419d6"
            && hex(String(repeating: "1234567890", count: 8))
                == "57edf4a22be3c955ac49da2e2107b67a"
    }
}
