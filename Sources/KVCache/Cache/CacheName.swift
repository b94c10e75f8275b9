/// Rules for the name of a cache kept under a shared base directory.
enum CacheName {
    /// Longest name, in characters (a file name's limit on common file systems).
    static let maxLength = 255

    /// Throws `KVCacheError.invalidArgument` unless `name` is 1–255 ASCII letters,
    /// digits, `.`, `-` or `_`, and neither `.` nor `..`.
    static func validate(_ name: String) throws {
        func reject(_ reason: String) -> KVCacheError {
            .invalidArgument("cache name \"\(name)\" \(reason)")
        }
        if name.isEmpty { throw reject("is empty") }
        if name == "." || name == ".." { throw reject("names a special directory") }
        if name.utf8.count > maxLength { throw reject("is longer than \(maxLength) characters") }
        if name.utf8.contains(UInt8(ascii: "/")) { throw reject("contains '/'") }
        guard name.utf8.allSatisfy(isAllowed) else {
            throw reject("may contain only ASCII letters, digits, '.', '-' and '_'")
        }
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
