import Testing
@testable import kvcache_bench

@Suite struct FileNameTests {
    /// RFC 1321's test vectors: the names are the ones SDWebImage and Kingfisher give the same keys.
    @Test func namesAreTheHexMD5OfTheKey() {
        #expect(FileName.md5("") == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(FileName.md5("abc") == "900150983cd24fb0d6963f7d28e17f72")
        #expect(FileName.md5("The quick brown fox jumps over the lazy dog") == "9e107d9d372bb6826bd81d3542a419d6")
        #expect(FileName.md5(String(repeating: "1234567890", count: 8)) == "57edf4a22be3c955ac49da2e2107b67a")
    }
}
