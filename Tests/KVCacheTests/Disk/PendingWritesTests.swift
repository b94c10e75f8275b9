@testable import KVCache
import Foundation
import Testing

@Suite struct PendingWritesTests {
    func value(file: String? = nil, inline: Int = 0) -> PendingWrites.Write {
        .set(ManifestRow(filename: file, inline: inline > 0 ? Data(count: inline) : nil, size: Int64(inline),
                         accessed: 0, deadline: nil, lifetime: nil))
    }

    @Test func entriesKeepTheOrderKeysWereFirstWritten() {
        var writes = PendingWrites()
        for key in ["c", "a", "b"] { _ = writes.record(value(inline: 1), forKey: key) }
        _ = writes.record(.remove, forKey: "a")
        #expect(writes.entries.map(\.key.string) == ["c", "a", "b"])
        #expect(writes.count == 3)
        if case .remove? = writes["a"] {} else { Issue.record("a rewritten key reads its latest write") }
    }

    @Test func rewritingAKeyReturnsTheFileOfThePendingSetItReplaced() {
        var writes = PendingWrites()
        #expect(writes.record(value(file: "f1"), forKey: "k") == nil)
        #expect(writes.record(value(file: "f2"), forKey: "k") == "f1")
        #expect(writes.files == ["f2"])
        #expect(writes.record(.remove, forKey: "k") == "f2")
        #expect(writes.files.isEmpty)
    }

    @Test func heldBytesFollowRewritesAndRemoveAll() {
        var writes = PendingWrites(capacity: 4)
        _ = writes.record(value(inline: 100), forKey: "a")
        _ = writes.record(value(inline: 10), forKey: "b")
        _ = writes.record(value(inline: 30), forKey: "a")
        #expect(writes.bytes == 40)
        writes.removeAll()
        #expect(writes.isEmpty)
        #expect(writes.bytes == 0)
        #expect(writes["a"] == nil)
    }

    @Test func keysDifferingOnlyInUnicodeNormalizationAreDistinct() {
        var writes = PendingWrites()
        _ = writes.record(value(inline: 1), forKey: "caf\u{e9}")
        _ = writes.record(value(inline: 2), forKey: "cafe\u{301}")
        #expect(writes.count == 2)
    }
}
