import ArgumentParser
import Foundation
import KVCache

@main
struct KVCacheTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kvcache",
        abstract: "Inspect and maintain a KVCache disk cache directory.",
        discussion: """
            The cache is opened with automatic trims off; nothing is deleted unless a \
            command says so. Progress goes to stderr, results to stdout.

            Exit status: 0 success; 1 the answer is no (verify found problems, get found \
            no value); 2 usage error; 3 operational error (message on stderr).
            """,
        version: KVCacheVersion.string,
        subcommands: [Stats.self, Get.self, SetValue.self, Remove.self, Keys.self, Trim.self, Verify.self])

    /// ArgumentParser's own `main`, with this tool's exit codes: usage errors exit 2
    /// (not EX_USAGE), and any other failure exits 3 with its message.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            exit(with: error)
        }
    }

    private static func exit(with error: Error) -> Never {
        if error is ExitCode { exit(withError: error) }
        let code = exitCode(for: error)
        if code == .success { exit(withError: error) }  // --help, --version
        // A key or argument the library refuses is a usage error too (e.g. an empty key).
        if let error = error as? KVCacheError, error.code == .invalidKey || error.code == .invalidArgument {
            Console.writeError("kvcache: error: \(error.description)")
            Foundation.exit(ToolExit.usage.rawValue)
        }
        if code == .validationFailure {
            Console.writeError(fullMessage(for: error))
            Foundation.exit(ToolExit.usage.rawValue)
        }
        Console.writeError("kvcache: error: \(ToolError.describe(error))")
        Foundation.exit(ToolExit.operationalError.rawValue)
    }
}

/// The tool's exit statuses.
enum ToolExit: Int32 {
    case success = 0
    /// Verify found problems; get found no value.
    case no = 1
    case usage = 2
    case operationalError = 3

    var code: ExitCode { ExitCode(rawValue) }
}
