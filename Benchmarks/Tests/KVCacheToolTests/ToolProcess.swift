import Foundation

/// The built `kvcache` binary, run as a child process.
enum ToolProcess {
    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }

        func json() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: stdout) as? [String: Any] else {
                throw CocoaError(.propertyListReadCorrupt)
            }
            return object
        }
    }

    /// `$KVCACHE_TOOL`, or `kvcache` beside the test binary (both are in the build directory).
    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["KVCACHE_TOOL"] { return URL(fileURLWithPath: path) }
        var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        if !FileManager.default.fileExists(atPath: directory.path), let first = CommandLine.arguments.first {
            directory = URL(fileURLWithPath: first)
        }
        while directory.path != "/" {
            directory.deleteLastPathComponent()
            let candidate = directory.appendingPathComponent("kvcache")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return URL(fileURLWithPath: "kvcache")
    }()

    /// Runs `kvcache arguments...` with `input` on stdin; output goes through files, so
    /// no pipe can fill up and block the child.
    static func run(_ arguments: [String], input: Data = Data()) throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let stdin = scratch.appendingPathComponent("stdin")
        let stdout = scratch.appendingPathComponent("stdout")
        let stderr = scratch.appendingPathComponent("stderr")
        try input.write(to: stdin)
        try Data().write(to: stdout)
        try Data().write(to: stderr)

        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardInput = try FileHandle(forReadingFrom: stdin)
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: try Data(contentsOf: stdout),
                      stderr: String(decoding: try Data(contentsOf: stderr), as: UTF8.self))
    }
}
