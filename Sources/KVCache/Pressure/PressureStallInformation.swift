import Foundation

/// One reading of a Linux pressure stall information (PSI) file, such as
/// `/proc/pressure/memory` or a cgroup's `memory.pressure`:
///
///     some avg10=0.31 avg60=0.12 avg300=0.03 total=1234567
///     full avg10=0.00 avg60=0.00 avg300=0.00 total=23456
struct PressureStallInformation: Sendable, Hashable {
    /// Percentages of wall time stalled, averaged over 10, 60 and 300 seconds,
    /// and the total stall time in microseconds.
    struct Stall: Sendable, Hashable {
        var avg10: Double
        var avg60: Double
        var avg300: Double
        var total: UInt64
    }

    /// Time in which at least one task stalled.
    var some: Stall
    /// Time in which all non-idle tasks stalled at once; absent from files that
    /// have no such line (CPU pressure before Linux 5.13).
    var full: Stall?

    /// Parses the text of a PSI file; `nil` when it has no valid `some` line.
    /// Unknown fields and lines are ignored, for kernels that add some.
    init?(parsing text: String) {
        var some: Stall?
        var full: Stall?
        for line in text.split(whereSeparator: \.isNewline) {
            let words = line.split(separator: " ")
            guard let kind = words.first, let stall = Self.stall(fields: words.dropFirst()) else { continue }
            switch kind {
            case "some": some = stall
            case "full": full = stall
            default: continue
            }
        }
        guard let some else { return nil }
        self.some = some
        self.full = full
    }

    private static func stall(fields: ArraySlice<Substring>) -> Stall? {
        var values: [Substring: Substring] = [:]
        for field in fields {
            let parts = field.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[parts[0]] = parts[1] }
        }
        guard
            let avg10 = values["avg10"].flatMap({ Double($0) }),
            let avg60 = values["avg60"].flatMap({ Double($0) }),
            let avg300 = values["avg300"].flatMap({ Double($0) }),
            let total = values["total"].flatMap({ UInt64($0) })
        else { return nil }
        return Stall(avg10: avg10, avg60: avg60, avg300: avg300, total: total)
    }

    /// Reads and parses the PSI file at `path`.
    ///
    /// - Throws: `KVCacheError.io` when the file cannot be read (PSI files fail
    ///   with `EOPNOTSUPP` when the kernel has PSI disabled), or
    ///   `KVCacheError.invalidArgument` when it is not in PSI format.
    init(contentsOf path: String) throws {
        let text = try readVirtualFile(atPath: path)
        guard let reading = Self(parsing: text) else {
            throw KVCacheError.invalidArgument("\(path) is not a pressure stall information file")
        }
        self = reading
    }
}
