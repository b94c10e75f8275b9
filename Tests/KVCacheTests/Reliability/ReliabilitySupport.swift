import Foundation
@testable import KVCache

/// Switches and helpers shared by the reliability suites.
enum Reliability {
    /// `KVCACHE_LONG_TESTS=1` runs the long versions (hundreds of crash cycles, a million model ops...).
    static let isLong = ProcessInfo.processInfo.environment["KVCACHE_LONG_TESTS"] == "1"

    /// `KVCACHE_SEED=<n>` replays a run; otherwise a fixed seed per suite (CI stays deterministic
    /// where the system allows).
    static func seed(default value: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment["KVCACHE_SEED"].flatMap(UInt64.init) ?? value
    }

    /// Prints a figure line that docs/RELIABILITY.md quotes.
    static func report(_ line: String) {
        print("[reliability] \(line)")
    }
}

/// Checks every invariant of a store at rest, on raw SQL: integrity, the stats
/// row equal to a recount, every row's file present with its recorded size, and
/// every file in data/ referenced by a row. Returns the problems found.
func storeProblems(_ dir: TemporaryDirectory) throws -> [String] {
    try storeProblems(at: dir.path)
}

func storeProblems(at path: String) throws -> [String] {
    let manifestPath = path + "/manifest.sqlite"
    let dataPath = path + "/data"
    var problems: [String] = []
    let integrity = try rawRows(manifestPath, "PRAGMA integrity_check")
    if integrity != [["ok"]] { problems.append("integrity_check: \(integrity)") }
    let stats = try rawRows(manifestPath, "SELECT count, size, file_count, file_size FROM stats")
    let recount = try rawRows(manifestPath, """
        SELECT count(*), coalesce(sum(size), 0),
               (SELECT count(*) FROM manifest WHERE filename IS NOT NULL),
               (SELECT coalesce(sum(size), 0) FROM manifest WHERE filename IS NOT NULL) FROM manifest
        """)
    if stats != recount { problems.append("stats row \(stats) differs from the recount \(recount)") }
    let rows = try rawRows(manifestPath, "SELECT key, filename, size FROM manifest WHERE filename IS NOT NULL")
    var referenced = Set<String>()
    for row in rows {
        let (key, name, size) = (row[0] ?? "?", row[1]!, Int64(row[2]!)!)
        referenced.insert(name)
        let actual = fileSize(dataPath + "/" + name)
        if actual != size { problems.append("row \(key): file \(name) has \(actual.map(String.init) ?? "no") bytes, expected \(size)") }
    }
    let stray = Set((try? FileManager.default.contentsOfDirectory(atPath: dataPath)) ?? []).subtracting(referenced)
    if !stray.isEmpty { problems.append("\(stray.count) files in data/ without a row: \(stray.sorted().prefix(5))") }
    return problems
}
