import ArgumentParser
import Foundation
import KVCache

struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a value's raw bytes to stdout (or a file), or with --info what is stored; exit 1 if there is none.")

    @OptionGroup var location: CacheLocation
    @Argument(help: "The key.") var key: String
    @Option(name: .shortAndLong, help: "Write the value to this file instead of stdout.", completion: .file())
    var output: String?
    @Flag(help: "Print the value's size, where it is stored and when it expires (its TTL), not the value.")
    var info = false
    @OptionGroup var format: OutputOptions

    func validate() throws {
        if info, output != nil { throw ValidationError("--info prints to stdout; it takes no --output") }
        if format.json, !info { throw ValidationError("--json goes with --info (the value itself is raw bytes)") }
    }

    func run() throws {
        let cache = try location.open(readOnly: true)
        defer { try? cache.close() }
        if info { return try printInfo(cache) }
        guard let value = try cache.value(forKey: key) else {
            Console.writeError("kvcache: no value for \(key)")
            throw ToolExit.no.code
        }
        if let output {
            do {
                try value.write(to: URL(fileURLWithPath: output))
            } catch {
                throw ToolError.file(output, error)
            }
        } else {
            FileHandle.standardOutput.write(value)
        }
    }

    private func printInfo(_ cache: DiskCache) throws {
        guard let entry = try cache.info(forKey: key) else {
            Console.writeError("kvcache: no value for \(key)")
            throw ToolExit.no.code
        }
        if format.json {
            try Console.writeJSON(InfoOutput(key: key, entry))
        } else {
            Console.write("\(key): " + Self.describe(entry))
        }
    }

    /// "11 bytes, inline, expires in 59 s (2026-11-24T10:00:00Z)".
    static func describe(_ entry: DiskCache.EntryInfo) -> String {
        let place = entry.isInFile ? "in a file" : "inline"
        guard let date = entry.expirationDate, let left = entry.remainingLifetime() else {
            return "\(Console.bytes(entry.size)), \(place), never expires"
        }
        return "\(Console.bytes(entry.size)), \(place), expires in \(Console.duration(left)) (\(Console.date(date)))"
    }
}

/// `get --info --json`: `ttl` in seconds, null for an entry that never expires.
struct InfoOutput: Encodable {
    var key: String
    var size: Int64
    var inFile: Bool
    var expires: Date?
    var ttl: Double?

    init(key: String, _ entry: DiskCache.EntryInfo) {
        self.key = key
        size = entry.size
        inFile = entry.isInFile
        expires = entry.expirationDate
        ttl = entry.remainingLifetime()?.secondsValue
    }

    enum CodingKeys: String, CodingKey { case key, size, inFile, expires, ttl }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(key, forKey: .key)
        try container.encode(size, forKey: .size)
        try container.encode(inFile, forKey: .inFile)
        try container.encode(expires, forKey: .expires)  // null rather than absent
        try container.encode(ttl, forKey: .ttl)
    }
}
