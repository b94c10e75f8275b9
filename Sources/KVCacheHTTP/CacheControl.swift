#if HTTP
/// The directives of a message's `Cache-Control` field lines (RFC 9111 §5.2): names
/// compared without case, values in token or quoted-string form. A directive named twice
/// keeps its first value (RFC 9111 §4.2.1 allows the first occurrence).
struct CacheControl: Sendable {
    /// Lower-cased name → value (nil for a directive without `=`).
    private(set) var directives: [String: String?] = [:]

    /// Directives past this many are ignored: a hostile header costs bounded work.
    static let directiveLimit = 64

    init(_ fieldValues: [String]) {
        var count = 0
        for value in fieldValues {
            for item in Self.split(value) {
                count += 1
                if count > Self.directiveLimit { return }
                let name: Substring
                var argument: String?
                if let equals = item.firstIndex(of: "=") {
                    name = item[..<equals]
                    argument = Self.unquote(item[item.index(after: equals)...])
                } else {
                    name = item
                }
                let key = name.trimmingHTTPWhitespace().lowercased()
                guard !key.isEmpty, directives[key] == nil else { continue }
                directives[key] = argument
            }
        }
    }

    // Most requests have no Cache-Control: answer those without hashing the name.
    func has(_ name: String) -> Bool { !directives.isEmpty && directives[name] != nil }

    /// A directive's delta-seconds (RFC 9111 §1.2.2): `nil` when absent, `.invalid` when
    /// its value is not a non-negative integer, and 2^31 for any value past that.
    func seconds(_ name: String) -> DeltaSeconds? {
        guard !directives.isEmpty, let entry = directives[name] else { return nil }
        guard let value = entry, !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return .invalid
        }
        // Past 10 digits it is over 2^31 whatever the digits are.
        guard value.utf8.count <= 10, let number = Int(value) else { return .seconds(2_147_483_648) }
        return .seconds(min(number, 2_147_483_648))
    }

    /// The field names of a qualified `no-cache="a, b"` or `private="a"`, lower-cased; empty
    /// when the directive has no value.
    func fieldNames(_ name: String) -> [String] {
        guard let entry = directives[name], let value = entry else { return [] }
        return value.split(separator: ",").map { $0.trimmingHTTPWhitespace().lowercased() }.filter { !$0.isEmpty }
    }

    /// Splits on commas outside quoted strings.
    private static func split(_ value: String) -> [Substring] {
        var items: [Substring] = []
        var start = value.startIndex
        var inQuotes = false
        var escaped = false
        var index = value.startIndex
        while index < value.endIndex {
            let character = value[index]
            if escaped {
                escaped = false
            } else if inQuotes && character == "\\" {
                escaped = true
            } else if character == "\"" {
                inQuotes.toggle()
            } else if character == "," && !inQuotes {
                items.append(value[start..<index])
                start = value.index(after: index)
            }
            index = value.index(after: index)
        }
        items.append(value[start...])
        return items.map { $0.trimmingHTTPWhitespace() }.filter { !$0.isEmpty }
    }

    private static func unquote(_ raw: Substring) -> String {
        let value = raw.trimmingHTTPWhitespace()
        guard value.count >= 2, value.first == "\"", value.last == "\"" else { return String(value) }
        var result = ""
        var escaped = false
        for character in value.dropFirst().dropLast() {
            if !escaped && character == "\\" { escaped = true; continue }
            escaped = false
            result.append(character)
        }
        return result
    }
}

/// A delta-seconds value, or a directive whose value is not one.
enum DeltaSeconds: Equatable, Sendable {
    case seconds(Int)
    case invalid

    var value: Int? {
        if case .seconds(let seconds) = self { return seconds }
        return nil
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's OWS).
    func trimmingHTTPWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return Substring() }
        let last = lastIndex(where: { !isSpace($0) })!
        return Substring(self[first...last])
    }
}
#endif
