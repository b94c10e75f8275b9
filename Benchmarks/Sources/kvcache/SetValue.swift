import ArgumentParser
import Foundation
import KVCache

struct SetValue: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Store a value read from a file, or from stdin, and print what was stored. Creates the cache if needed.")

    @OptionGroup var location: CacheLocation
    @Argument(help: "The key.") var key: String
    @Option(name: .shortAndLong, help: "Read the value from this file instead of stdin.", completion: .file())
    var file: String?
    @Option(parsing: .unconditional, help: "Expire the value this long from now: seconds, or a number with ms, s, m, h or d (90, 10m, 7d).")
    var expires: DurationArgument?

    func validate() throws {
        if let expires, !(expires.duration > .zero) { throw ValidationError("--expires must be a positive duration") }
    }

    func run() throws {
        let value: Data
        if let file {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), isDirectory.boolValue {
                throw ToolError.file(path: file, message: "is a directory, not a file")
            }
            do {
                value = try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw ToolError.file(file, error)
            }
        } else {
            if isatty(STDIN_FILENO) != 0 { Console.writeError("kvcache: reading the value from stdin (end with Ctrl-D)") }
            value = FileHandle.standardInput.readDataToEndOfFile()
        }
        let cache = try location.open(creating: true)
        defer { try? cache.close() }  // writes were flushed (and reported) above
        let replaced = try cache.contains(key)
        try cache.setValue(value, forKey: key, expiration: expires.map { .after($0.duration) } ?? .never)
        try cache.flush()
        let info = try cache.info(forKey: key)
        Console.write("\(replaced ? "replaced" : "stored") \(key): " + (info.map(Get.describe) ?? Console.bytes(Int64(value.count))))
    }
}
