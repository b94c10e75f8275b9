import Testing
@testable import KVCache

/// The policy's hash of strings: every byte counts, whatever the length.
@Suite struct PolicyHashTests {
    @Test func everyByteOfEveryLengthChangesTheHash() {
        let hash = PolicyHash<String>(seed: 0)
        for length in 1...40 {
            let base = String(repeating: "a", count: length)
            var hashes: Set<UInt32> = [hash.unseeded(base)]
            for position in 0..<length {
                var bytes = Array(base.utf8)
                bytes[position] = UInt8(ascii: "b")
                hashes.insert(hash.unseeded(String(decoding: bytes, as: UTF8.self)))
            }
            #expect(hashes.count == length + 1, "length \(length)")
        }
    }

    @Test func theLengthCountsAndSmallAndLargeStringsAgree() {
        let hash = PolicyHash<String>(seed: 0)
        let lengths = (0...40).map { hash.unseeded(String(repeating: "\u{0}", count: $0)) }
        #expect(Set(lengths).count == lengths.count)
        // Small (inline, up to 15 bytes) and native strings are read by different paths;
        // both hash their UTF-8 bytes.
        for length in 0...40 {
            let string = String((0..<length).map { Character(UnicodeScalar(UInt8(ascii: "a") + UInt8($0 % 26))) })
            let bytes = Array(string.utf8).withUnsafeBytes { PolicyHash<String>.bytes($0) }
            #expect(hash.unseeded(string) == bytes, "length \(length)")
            #expect(PolicyHash<String>.bytes(string) == bytes, "length \(length)")
        }
        let accented = "héllo wörld, naïve"
        #expect(hash.unseeded(accented) == Array(accented.utf8).withUnsafeBytes { PolicyHash<String>.bytes($0) })
    }
}
