import Foundation

/// python-diskcache's get-hit throughput with 1 and 2 processes, from
/// Scripts/diskcache_read_scaling.py (the same keys and value size; timed in Python).
struct DiskcacheReadScaling {
    var version: String
    var oneProcess: Double
    var twoProcesses: Double

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    static func run(directory: URL, valueSize: Int, keys: Int, reads: Int, runs: Int)
        -> Result<DiskcacheReadScaling, Unavailable> {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Scripts/diskcache_read_scaling.py")
        guard FileManager.default.fileExists(atPath: script.path) else {
            return .failure(Unavailable(description: "python-diskcache row skipped: \(script.path) not found"))
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, directory.path, String(valueSize), String(keys), String(reads),
                             String(runs)]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch {
            return .failure(Unavailable(description: "python-diskcache row skipped: \(error)"))
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        struct Reply: Decodable {
            var diskcache: String
            var rates: [String: Double]
        }
        guard process.terminationStatus == 0, let reply = try? JSONDecoder().decode(Reply.self, from: data),
              let one = reply.rates["1"], let two = reply.rates["2"]
        else {
            return .failure(Unavailable(
                description: "python-diskcache row skipped (pip install diskcache to compare; exit \(process.terminationStatus))"))
        }
        return .success(DiskcacheReadScaling(version: reply.diskcache, oneProcess: one, twoProcesses: two))
    }
}
