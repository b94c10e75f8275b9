/// A key that compares and hashes by its UTF-8 bytes, as SQLite compares TEXT.
///
/// Swift's `String ==` treats canonically equivalent spellings as equal ("é" as
/// one scalar and as "e" + U+0301), while the manifest keeps them as two keys. The
/// in-memory buffers in front of the manifest use this type so that a key means
/// the same thing whether or not its write has been committed yet.
struct ByteWiseKey: Hashable {
    let string: String

    init(_ string: String) { self.string = string }

    static func == (lhs: ByteWiseKey, rhs: ByteWiseKey) -> Bool {
        lhs.string.utf8.elementsEqual(rhs.string.utf8)
    }

    func hash(into hasher: inout Hasher) {
        var copy = string
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
