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

    @Test func canonicallyEquivalentStringsHashAlike() {
        // Swift's == says these pairs are equal; a table stripe chosen by a hash that
        // differed would look for the key in the wrong stripe.
        let hash = PolicyHash<String>(seed: 0)
        let long = String(repeating: "\u{C5}ngstr\u{F6}m ", count: 40)
        let pairs = [
            ("caf\u{E9}", "cafe\u{301}"),
            ("K", "\u{212A}"),
            ("\u{212B}", "A\u{30A}"),
            ("a;b", "a\u{37E}b"),
            ("https://example.com/r\u{E9}sum\u{E9}/1", "https://example.com/re\u{301}sume\u{301}/1"),
            (long, long.decomposedForTest),
        ]
        for (composed, decomposed) in pairs {
            #expect(composed == decomposed)
            #expect(Array(composed.utf8) != Array(decomposed.utf8))
            #expect(hash.unseeded(composed) == hash.unseeded(decomposed), "\(composed.debugDescription)")
        }
        // ASCII is hashed from its bytes, whatever path it takes.
        #expect(PolicyHash<String>.folded(ByteHash.canonical("plain ascii key", start: ByteHash.unseededStart))
            == hash.unseeded("plain ascii key"))
    }
}

private extension String {
    /// The string with each "\u{C5}" and "\u{F6}" spelled as a letter and a combining mark.
    var decomposedForTest: String {
        replacingOccurrencesForTest(of: "\u{C5}", with: "A\u{30A}").replacingOccurrencesForTest(of: "\u{F6}", with: "o\u{308}")
    }

    func replacingOccurrencesForTest(of scalar: String, with replacement: String) -> String {
        var result = ""
        for character in unicodeScalars {
            if String(character) == scalar { result += replacement } else { result.unicodeScalars.append(character) }
        }
        return result
    }
}
