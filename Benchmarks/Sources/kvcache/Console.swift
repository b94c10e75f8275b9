import Foundation

/// Writing to stdout and stderr, and formatting numbers for people.
enum Console {
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func writeError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Pretty-printed JSON with sorted keys and ISO 8601 dates, on stdout.
    static func writeJSON<Value: Encodable>(_ value: Value) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        write(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// "1.5 MiB (1572864 bytes)"; plain bytes below 1 KiB.
    static func bytes(_ count: Int64) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = -1
        while abs(value) >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit < 0 { return count == 1 ? "1 byte" : "\(count) bytes" }
        return String(format: "%.1f", value) + " \(units[unit]) (\(count) bytes)"
    }

    /// "1 entry", "2 entries", "0 keys": the count with the noun in the right number.
    static func count(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(count) " + (count == 1 ? singular : plural ?? singular + "s")
    }

    /// "42 s", "1 h 5 min", "3 d 2 h": a duration for people, to the second.
    static func duration(_ duration: Duration) -> String {
        var left = Int(duration.wholeSecondsRoundedUp)
        var parts: [String] = []
        for (unit, length) in [("d", 86_400), ("h", 3_600), ("min", 60)] where left >= length {
            parts.append("\(left / length) \(unit)")
            left %= length
            if parts.count == 2 { return parts.joined(separator: " ") }
        }
        if left > 0 || parts.isEmpty { parts.append("\(left) s") }
        return parts.joined(separator: " ")
    }

    static func date(_ date: Date?) -> String {
        guard let date else { return "-" }
        return ISO8601DateFormatter().string(from: date)
    }

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }
}
