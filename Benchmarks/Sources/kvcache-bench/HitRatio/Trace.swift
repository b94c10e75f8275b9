import Foundation

/// A cache access trace of `../shared/traces` (formats in its README.md), loaded
/// as the keys in request order.
struct Trace {
    /// What the benchmark replays: the short name, the file, and the cache sizes.
    struct Entry: Sendable {
        var name: String
        var file: String
        var capacities: [Int]
    }

    /// Every shared trace, with the sizes its README gives (the LIRS traces at a tenth,
    /// a quarter and half of their distinct keys).
    static let catalog: [Entry] = [
        Entry(name: "oltp", file: "oltp.gz", capacities: [250, 1_000, 2_000, 4_000]),
        Entry(name: "web07", file: "web07.trace.xz", capacities: [250, 1_000, 4_000]),
        Entry(name: "web12", file: "web12.trace.xz", capacities: [250, 1_000, 4_000]),
        Entry(name: "gli", file: "gli.trace.gz", capacities: [250, 1_000, 4_000]),
        Entry(name: "multi1", file: "lirs-multi1.trace.gz", capacities: [260, 651, 1_303]),
        Entry(name: "multi2", file: "lirs-multi2.trace.gz", capacities: [568, 1_421, 2_842]),
        Entry(name: "multi3", file: "lirs-multi3.trace.gz", capacities: [745, 1_863, 3_727]),
        Entry(name: "sprite", file: "lirs-sprite.trace.gz", capacities: [707, 1_768, 3_537]),
        Entry(name: "ps", file: "lirs-ps.trace.gz", capacities: [308, 770, 1_541]),
        Entry(name: "cs", file: "lirs-cs.trace.gz", capacities: [140, 352, 704]),
        Entry(name: "cpp", file: "lirs-cpp.trace.gz", capacities: [122, 305, 611]),
        Entry(name: "2_pools", file: "lirs-2_pools.trace.gz", capacities: [993, 2_484, 4_969]),
        Entry(name: "zigzag", file: "lirs-zigzag.trace.gz", capacities: [200, 500, 1_000]),
        Entry(name: "loop", file: "lirs-loop.trace.gz", capacities: [101, 252, 505]),
    ]

    var name: String
    var keys: [Int]
    var distinctKeys: Int

    enum LoadError: Error, CustomStringConvertible {
        case decompression(String)

        var description: String {
            switch self {
            case .decompression(let message): return message
            }
        }
    }

    /// Reads `entry.file` from `directory`, decompressing it with the system's xz or gzip.
    static func load(_ entry: Entry, from directory: URL) throws -> Trace {
        let path = directory.appendingPathComponent(entry.file).path
        let bytes = try decompress(path, with: entry.file.hasSuffix(".xz") ? "xz" : "gzip")
        let keys: [Int]
        switch entry.file {
        case let file where file.hasPrefix("oltp"):
            // Lines `start count ignored seq`: the keys start ..< start + count.
            var expanded: [Int] = []
            expanded.reserveCapacity(1_000_000)
            forEachLine(bytes) { fields in
                guard fields.count >= 2 else { return }
                expanded.append(contentsOf: fields[0] ..< fields[0] + fields[1])
            }
            keys = expanded
        case let file where file.hasPrefix("gli") || file.hasPrefix("lirs"):
            // One integer per line (lirs-loop's end in CR LF); a `*` line is a checkpoint.
            var list: [Int] = []
            forEachLine(bytes) { fields in
                if let key = fields.first { list.append(key) }
            }
            keys = list
        default:
            // 32-bit big-endian signed integers.
            keys = stride(from: 0, to: bytes.count - 3, by: 4).map { offset in
                Int(Int32(bitPattern: UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
                    | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])))
            }
        }
        return Trace(name: entry.name, keys: keys, distinctKeys: Set(keys).count)
    }

    /// Where the traces are by default: `../shared/traces` beside the repository this
    /// binary was built from (then beside the current directory's repository).
    static func defaultDirectory() -> URL {
        let repository = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // HitRatio
            .deletingLastPathComponent()  // kvcache-bench
            .deletingLastPathComponent()  // Sources
            .deletingLastPathComponent()  // Benchmarks
            .deletingLastPathComponent()  // the repository
        let current = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let candidates = [repository, current, current.deletingLastPathComponent()].map {
            $0.deletingLastPathComponent().appendingPathComponent("shared/traces").standardizedFileURL
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0.path) } ?? candidates[0]
    }

    /// Calls `body` with the leading run of space-separated unsigned integers of
    /// each line (empty for a line such as `*`).
    static func forEachLine(_ bytes: [UInt8], _ body: (_ fields: [Int]) -> Void) {
        var fields: [Int] = []
        var value = 0
        var inNumber = false
        var stopped = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if !stopped {
                    value = value * 10 + Int(byte &- UInt8(ascii: "0"))
                    inNumber = true
                }
            case UInt8(ascii: "\n"):
                if inNumber && !stopped { fields.append(value) }
                body(fields)
                fields.removeAll(keepingCapacity: true)
                value = 0
                inNumber = false
                stopped = false
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                if inNumber && !stopped { fields.append(value) }
                value = 0
                inNumber = false
            default:
                stopped = true
            }
        }
        if inNumber && !stopped { fields.append(value) }
        if !fields.isEmpty { body(fields) }
    }

    private static func decompress(_ path: String, with tool: String) throws -> [UInt8] {
        guard FileManager.default.fileExists(atPath: path) else {
            throw LoadError.decompression("\(path) does not exist")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool, "-dc", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, !data.isEmpty else {
            throw LoadError.decompression("\(tool) -dc \(path) exited with status \(process.terminationStatus)")
        }
        return [UInt8](data)
    }
}
