import ArgumentParser
import KVCache

struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove the values of one or more keys (keys without a value are fine).")

    @OptionGroup var location: CacheLocation
    @Argument(help: "The keys.") var keys: [String]

    func validate() throws {
        if keys.isEmpty { throw ValidationError("Missing expected argument '<keys> ...'") }
    }

    func run() throws {
        let cache = try location.open()
        defer { try? cache.close() }  // writes were flushed (and reported) above
        for key in keys { try cache.removeValue(forKey: key) }
        try cache.flush()
    }
}
