import ArgumentParser
import KVCache

struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove the values of one or more keys; print how many had one (keys without a value are fine).")

    @OptionGroup var location: CacheLocation
    @Argument(help: "The keys.") var keys: [String]

    func validate() throws {
        if keys.isEmpty { throw ValidationError("Missing expected argument '<keys> ...'") }
    }

    func run() throws {
        let cache = try location.open()
        defer { try? cache.close() }  // writes were flushed (and reported) above
        var removed = 0
        for key in Set(keys) {
            if try cache.contains(key) { removed += 1 }
            try cache.removeValue(forKey: key)
        }
        try cache.flush()
        Console.write("removed \(Console.count(removed, "value"))")
    }
}
