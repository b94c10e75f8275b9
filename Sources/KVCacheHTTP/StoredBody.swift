#if HTTP
import Foundation
import KVCache

/// Where a stored response's body is: in its record, or, when large, in a disk-level value
/// of its own that is read in pieces (so a hit never loads it whole).
enum StoredBody: Sendable, Equatable {
    case bytes(Data)
    /// The value under `key` in the disk level, of `count` bytes.
    case file(key: String, count: Int64)

    var count: Int64 {
        switch self {
        case .bytes(let bytes): return Int64(bytes.count)
        case .file(_, let count): return count
        }
    }

    /// The key of a new body value: a fresh one each time, so a record being replaced never
    /// shares its body with the new one, and unlike a URL's key it never runs long.
    static func newFileKey() -> String {
        "http-body:" + UUID().uuidString
    }
}
#endif
#if HTTP
/// A stored body, opened to be served: its file (if it has one) stays readable while this
/// exists, even if the entry is replaced meanwhile.
enum OpenedBody: Sendable {
    case bytes(Data)
    case reader(DiskCache.ValueReader)

    var count: Int64 {
        switch self {
        case .bytes(let bytes): return Int64(bytes.count)
        case .reader(let reader): return reader.count
        }
    }

    /// The body, or the bytes of `range` in it.
    func body(range: Range<Int64>? = nil) -> HTTPCacheBody {
        switch self {
        case .bytes(let bytes):
            guard let range else { return HTTPCacheBody(bytes) }
            let start = bytes.startIndex + Int(range.lowerBound)
            return HTTPCacheBody(Data(bytes[start..<start + range.count]))
        case .reader(let reader):
            return HTTPCacheBody(source: .stored(reader, range: range ?? 0..<reader.count))
        }
    }
}
#endif
