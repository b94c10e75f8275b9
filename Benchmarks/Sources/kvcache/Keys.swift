import ArgumentParser
import KVCache

struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List keys in byte-wise order, a page at a time (expired entries are skipped).",
        discussion: "For the next page, pass the last key printed as --after (JSON output gives it as `next`).")

    @OptionGroup var location: CacheLocation
    @Option(help: "List only the keys that start with this (byte-wise).") var prefix = ""
    @Option(help: "Start after this key.") var after: String?
    @Option(parsing: .unconditional, help: "Most keys to list.") var limit = 100
    @Flag(help: "List every key (in pages, ignoring --limit).") var all = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        let cache = try location.open(readOnly: true)
        defer { try? cache.close() }
        if all {
            var keys: [String] = []
            var cursor = after
            while true {
                let page = try cache.keys(withPrefix: prefix, after: cursor, limit: 1000)
                if !output.json { page.forEach(Console.write) } else { keys += page }
                guard let last = page.last else { break }
                cursor = last
            }
            if output.json { try Console.writeJSON(KeysOutput(keys: keys, next: nil)) }
            return
        }
        let keys = try cache.keys(withPrefix: prefix, after: after, limit: limit)
        if output.json {
            try Console.writeJSON(KeysOutput(keys: keys, next: keys.count == limit ? keys.last : nil))
        } else {
            keys.forEach(Console.write)
        }
    }
}

/// `keys --json`: `next` is the `--after` for the next page, null after the last one.
struct KeysOutput: Encodable {
    var keys: [String]
    var next: String?

    enum CodingKeys: String, CodingKey { case keys, next }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keys, forKey: .keys)
        try container.encode(next, forKey: .next)  // null rather than absent
    }
}
