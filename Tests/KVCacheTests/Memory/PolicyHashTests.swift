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
        // A small (inline) string and a native one of the same bytes hash alike.
        let small = "short"
        let large = String("short-and-then-some".prefix(5))
        #expect(hash.unseeded(small) == hash.unseeded(large))
        #expect(hash.unseeded("héllo wörld, naïve") == PolicyHash<String>.bytes("héllo wörld, naïve"))
    }
}
