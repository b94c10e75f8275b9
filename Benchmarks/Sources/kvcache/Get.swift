import ArgumentParser
import Foundation
import KVCache

struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a value's raw bytes to stdout (or a file); exit 1 if there is none.")

    @OptionGroup var location: CacheLocation
    @Argument(help: "The key.") var key: String
    @Option(name: .shortAndLong, help: "Write the value to this file instead of stdout.", completion: .file())
    var output: String?

    func run() throws {
        let cache = try location.open(readOnly: true)
        defer { try? cache.close() }
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
}
