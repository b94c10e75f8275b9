import ArgumentParser
import KVCache

struct Trim: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove least recently used entries down to a count or size, or entries by age.",
        discussion: "Several limits may be given; they are applied in the order expired, age, count, size.")

    @OptionGroup var location: CacheLocation
    @Option(parsing: .unconditional, help: "Keep at most this many entries.") var count: Int?
    @Option(parsing: .unconditional, help: "Keep at most this many bytes of values (suffixes K, M, G, T: powers of 1024).")
    var size: ByteCount?
    @Option(parsing: .unconditional, help: "Remove entries not accessed for this long: seconds, or a number with ms, s, m, h or d.")
    var age: DurationArgument?
    @Flag(help: "Remove entries whose expiration date has passed.") var expired = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if count == nil, size == nil, age == nil, !expired {
            throw ValidationError("Give at least one of --count, --size, --age, --expired")
        }
        if let count, count < 0 { throw ValidationError("--count must not be negative") }
    }

    func run() throws {
        let cache = try location.open()
        defer { try? cache.close() }  // writes were flushed (and reported) above
        var removed = TrimOutput.Removed()
        if expired { removed.expired = try cache.removeExpired() }
        if let age { removed.age = try cache.trim(toAge: age.duration) }
        if let count { removed.count = try cache.trim(toCount: count) }
        if let size { removed.size = try cache.trim(toSize: size.bytes) }
        try cache.flush()
        let result = TrimOutput(removed: removed, remainingCount: try cache.totalCount,
                                remainingSize: try cache.totalSize)
        if output.json {
            try Console.writeJSON(result)
        } else {
            Console.write("removed \(Console.count(removed.total, "entry", "entries")); "
                + "\(result.remainingCount) \(result.remainingCount == 1 ? "remains" : "remain"), "
                + Console.bytes(result.remainingSize))
        }
    }
}

/// `trim --json`: entries removed by each limit, and what remains.
struct TrimOutput: Encodable {
    struct Removed: Encodable {
        var expired = 0
        var age = 0
        var count = 0
        var size = 0
        var total: Int { expired + age + count + size }
    }

    var removed: Removed
    var remainingCount: Int
    var remainingSize: Int64
}

/// A byte count from the command line: digits with an optional K, M, G or T suffix (× 1024ⁿ).
struct ByteCount: ExpressibleByArgument {
    var bytes: Int64

    init?(argument: String) {
        var digits = argument.uppercased()
        if digits.hasSuffix("IB") { digits.removeLast(2) } else if digits.hasSuffix("B") { digits.removeLast() }
        var multiplier: Int64 = 1
        if let unit = digits.last, let power = "KMGT".firstIndex(of: unit) {
            multiplier = Int64(1) << (10 * ("KMGT".distance(from: "KMGT".startIndex, to: power) + 1))
            digits.removeLast()
        }
        guard let value = Int64(digits), value >= 0 else { return nil }
        let (bytes, overflow) = value.multipliedReportingOverflow(by: multiplier)
        if overflow { return nil }
        self.bytes = bytes
    }
}
