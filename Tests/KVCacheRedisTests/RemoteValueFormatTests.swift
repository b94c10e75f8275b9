import Foundation
import Testing
@testable import KVCache
@testable import KVCacheRedis

/// The stored value format alone (no server).
struct RemoteValueFormatTests {
    @Test func theHeaderIsMagicVersionFlagsAndALittleEndianDeadline() throws {
        let encoded = RemoteValueFormat.encode(RemoteEntry(data: Data([7, 8, 9]), expiration: .never), deadline: 1.5)
        #expect(Array(encoded) == Array("KVCR".utf8) + [1, 0] + [0xDC, 0x05, 0, 0, 0, 0, 0, 0] + [7, 8, 9])
        let decoded = try RemoteValueFormat.decode(encoded)
        #expect(decoded.data == Data([7, 8, 9]))
        #expect(decoded.deadline == 1.5)
    }

    @Test func aValueIsReadFromRawBytesAndCopiedAlone() throws {
        for count in [0, 1, 13, 14, 15, 1000, 100_000] {
            let entry = RemoteEntry(data: bytes(count, seed: UInt8(count % 251)), expiration: .never)
            let encoded = RemoteValueFormat.encode(entry, deadline: nil)
            let decoded = try #require(encoded.withUnsafeBytes { RemoteValueFormat.decode($0) })
            #expect(decoded.data == entry.data)
            #expect(decoded.data.startIndex == 0)
            #expect(decoded.deadline == nil)
        }
    }

    /// A slice (not starting at index 0) and a buffer larger than the value encode the same bytes.
    @Test func encodingIntoABufferMatchesANewData() {
        let value = bytes(300)[10..<290]
        let entry = RemoteEntry(data: value, expiration: .never)
        let expected = RemoteValueFormat.encode(entry, deadline: 1_700_000_000.25)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 400, alignment: 1)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0xAA)
        RemoteValueFormat.encode(entry, deadline: 1_700_000_000.25, into: buffer)
        #expect(Data(buffer[..<expected.count]) == expected)
        #expect(buffer[expected.count] == 0xAA)
    }

    @Test func bytesOfAnotherFormatAreNotAValue() {
        let good = RemoteValueFormat.encode(RemoteEntry(data: Data("x".utf8), expiration: .never), deadline: nil)
        var otherVersion = good
        otherVersion[4] = 2
        var otherMagic = good
        otherMagic[0] = UInt8(ascii: "k")
        for bad in [Data(), good.prefix(13), otherVersion, otherMagic] {
            #expect(bad.withUnsafeBytes { RemoteValueFormat.decode($0) } == nil)
            #expect { try RemoteValueFormat.decode(bad) } throws: { ($0 as? RemoteLevelError)?.code == .unexpectedReply }
        }
    }
}
