@testable import KVCache
import Testing

@Suite struct FileNameHashTests {
    @Test(arguments: [UInt64.min, 1, 0xa, 0xdead_beef, 0x0123_4567_89ab_cdef, UInt64.max])
    func hexIsSixteenZeroPaddedLowercaseDigits(value: UInt64) {
        let digits = String(value, radix: 16)
        #expect(FileNameHash.hex(value) == String(repeating: "0", count: 16 - digits.count) + digits)
    }

    @Test func aFileNameIsTheKeysHashAndTheSuffixInHex() {
        let name = FileNameHash.fileName(forKey: "images/../../etc/passwd", suffix: 0xff)
        #expect(name == FileNameHash.hex(FileNameHash.fnv1a64("images/../../etc/passwd")) + "-00000000000000ff")
        #expect(name.utf8.count == 33)
        #expect(FileStore.isPlainName(name))
    }

    @Test func theHashIsFNV1a64OfTheUTF8Bytes() {
        // Published FNV-1a 64-bit test vectors.
        #expect(FileNameHash.fnv1a64("") == 0xcbf2_9ce4_8422_2325)
        #expect(FileNameHash.fnv1a64("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(FileNameHash.fnv1a64("foobar") == 0x8594_4171_f739_67e8)
    }
}
