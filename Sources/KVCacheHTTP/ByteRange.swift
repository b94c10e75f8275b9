#if HTTP
/// One range of a `Range: bytes=...` request (RFC 9110 §14.1.2), served from a stored
/// complete response. Several ranges or other units are not served from the cache.
enum ByteRange: Equatable {
    /// `first-last`, or `first-` when `last` is nil.
    case from(Int, last: Int?)
    /// `-length`: the last `length` bytes.
    case suffix(Int)

    /// The single byte range `value` asks for, or nil.
    static func parse(_ value: String) -> ByteRange? {
        guard value.utf8.count <= 64 else { return nil }
        let trimmed = value.trimmingHTTPWhitespace()
        guard trimmed.lowercased().hasPrefix("bytes=") else { return nil }
        let spec = trimmed.dropFirst(6).trimmingHTTPWhitespace()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash].trimmingHTTPWhitespace()
        let last = spec[spec.index(after: dash)...].trimmingHTTPWhitespace()
        func number(_ digits: Substring) -> Int? {
            guard !digits.isEmpty, digits.count <= 18, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int(digits)
        }
        if first.isEmpty {
            guard let length = number(last) else { return nil }
            return .suffix(length)
        }
        guard let start = number(first) else { return nil }
        if last.isEmpty { return .from(start, last: nil) }
        guard let end = number(last), end >= start else { return nil }
        return .from(start, last: end)
    }

    /// The bytes of a body of `length` bytes the range selects, or nil when it selects none
    /// (a 416).
    func resolve(length: Int) -> Range<Int>? {
        switch self {
        case .from(let start, let last):
            guard start < length else { return nil }
            return start..<min((last ?? Int.max - 1) + 1, length)
        case .suffix(let count):
            guard count > 0, length > 0 else { return nil }
            return max(0, length - count)..<length
        }
    }
}
#endif
