import Foundation

/// Python's `diskcache` (the most used SQLite-plus-files cache outside Swift),
/// run in a child process by Scripts/diskcache_peer.py: the same keys, values
/// and access order as the in-process strategies, timed inside Python.
///
/// Optional: when `python3 -c 'import diskcache'` fails the disk tables simply
/// lack the row, and the run says so in one line.
final class PythonDiskcachePeer {
    let name = "python-diskcache"
    /// "diskcache 5.6.3, Python 3.11.7", from the script's first line.
    let version: String
    /// False after the script failed once; the rest of the run skips it.
    private(set) var isUsable = true

    private let process: Process
    private let input: FileHandle
    private let output: LineReader

    /// Starts the peer, or returns why it cannot run.
    static func start() -> Result<PythonDiskcachePeer, Unavailable> {
        guard let script = scriptURL() else {
            return .failure(Unavailable("Scripts/diskcache_peer.py not found (set KVCACHE_BENCH_PEER_SCRIPT)"))
        }
        guard (try? runToCompletion(["python3", "-c", "import diskcache"])) == 0 else {
            return .failure(Unavailable("python diskcache not importable: skipped (pip install diskcache to compare)"))
        }
        do {
            return .success(try PythonDiskcachePeer(script: script))
        } catch {
            return .failure(Unavailable("python diskcache peer did not start: \(error)"))
        }
    }

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    private init(script: URL) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        input = stdin.fileHandleForWriting
        output = LineReader(stdout.fileHandleForReading)
        guard let line = output.nextLine(),
              let hello = try? JSONDecoder().decode(Hello.self, from: Data(line.utf8)), hello.ready
        else {
            process.terminate()
            throw Unavailable("no greeting from \(script.lastPathComponent)")
        }
        version = "diskcache \(hello.diskcache), Python \(hello.python)"
    }

    /// One run of one value size in an empty `directory`; nil (and unusable
    /// from then on) when the script fails.
    func run(directory: URL, valueSize: Int, operations: Int, hitOrder: [Int]) -> RunResult? {
        let request = Request(directory: directory.path, valueSize: valueSize, operations: operations,
                              hitOrder: hitOrder)
        do {
            var line = try JSONEncoder().encode(request)
            line.append(0x0A)
            try input.write(contentsOf: line)
            guard let reply = output.nextLine() else { throw Unavailable("the script exited") }
            let result = try JSONDecoder().decode(RunResult.self, from: Data(reply.utf8))
            if let error = result.error { throw Unavailable(error) }
            if result.bytesRead != valueSize * operations || result.foundMissing != 0 {
                Progress.log("warning: \(name) read \(result.bytesRead) bytes, expected "
                    + "\(valueSize * operations); found \(result.foundMissing) missing keys")
            }
            return result
        } catch {
            Progress.log("warning: \(name) failed, skipped from here on: \(error)")
            isUsable = false
            return nil
        }
    }

    func stop() {
        try? input.close()
        process.waitUntilExit()
    }

    private struct Hello: Decodable {
        var ready: Bool
        var diskcache: String
        var python: String
    }

    private struct Request: Encodable {
        var directory: String
        var valueSize: Int
        var operations: Int
        var hitOrder: [Int]

        enum CodingKeys: String, CodingKey {
            case directory, valueSize = "value_size", operations, hitOrder = "hit_order"
        }
    }

    struct RunResult: Decodable {
        struct Batch: Decodable {
            var nanoseconds: UInt64
            var latencies: [UInt64]
        }
        var set: Batch
        var getHit: Batch
        var getMiss: Batch
        var bytesRead: Int
        var foundMissing: Int
        var error: String?

        enum CodingKeys: String, CodingKey {
            case set, getHit = "get-hit", getMiss = "get-miss", bytesRead = "bytes_read",
                 foundMissing = "found_missing", error
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            error = try container.decodeIfPresent(String.self, forKey: .error)
            let empty = Batch(nanoseconds: 0, latencies: [])
            set = try container.decodeIfPresent(Batch.self, forKey: .set) ?? empty
            getHit = try container.decodeIfPresent(Batch.self, forKey: .getHit) ?? empty
            getMiss = try container.decodeIfPresent(Batch.self, forKey: .getMiss) ?? empty
            bytesRead = try container.decodeIfPresent(Int.self, forKey: .bytesRead) ?? 0
            foundMissing = try container.decodeIfPresent(Int.self, forKey: .foundMissing) ?? 0
        }
    }

    /// The script beside the sources (found from this file's path at build
    /// time), unless KVCACHE_BENCH_PEER_SCRIPT names another.
    private static func scriptURL() -> URL? {
        if let path = ProcessInfo.processInfo.environment["KVCACHE_BENCH_PEER_SCRIPT"] {
            return URL(fileURLWithPath: path)
        }
        let benchmarks = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let script = benchmarks.appendingPathComponent("Scripts/diskcache_peer.py")
        return FileManager.default.fileExists(atPath: script.path) ? script : nil
    }

    private static func runToCompletion(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Lines from a pipe, blocking until each is complete.
private final class LineReader {
    private let handle: FileHandle
    private var buffer = Data()

    init(_ handle: FileHandle) { self.handle = handle }

    func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                return String(decoding: line, as: UTF8.self)
            }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }
}
