import Foundation
@testable import KVCache

/// A fresh directory under the system temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let url: URL
    var path: String { url.path }

    init(_ name: String = #function) {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("kvcache-\(safe.prefix(40))-\(UUID().uuidString)")
    }

    var dataPath: String { path + "/data" }
    var manifestPath: String { path + "/manifest.sqlite" }

    /// Names of the files in the data folder.
    func dataFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dataPath)) ?? []).sorted()
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

extension DiskCache.Configuration {
    /// Defaults for tests: no timers that could race assertions, no orphan grace.
    static func testing(_ configure: (inout DiskCache.Configuration) -> Void = { _ in }) -> Self {
        var configuration = DiskCache.Configuration()
        configuration.autoTrimInterval = nil
        configuration.orphanGracePeriod = .seconds(0)
        configuration.accessTimeResolution = .seconds(0)
        configure(&configuration)
        return configuration
    }
}

extension DiskCache {
    /// Opens a cache and waits for the orphan sweep started at open. The sweep takes
    /// the lock too, and its follow-ups settle an applied batch or start a due commit:
    /// tests that look at a batch in flight must not race with it.
    static func openedQuietly(_ dir: TemporaryDirectory,
                              _ configure: (inout Configuration) -> Void = { _ in }) throws -> DiskCache {
        let cache = try DiskCache(directory: dir.url, configuration: .testing(configure))
        cache.waitForBackgroundWork()
        return cache
    }
}

/// Runs a query on a separate, raw SQLite connection and returns the rows as text.
func rawRows(_ databasePath: String, _ sql: String) throws -> [[String?]] {
    let database = try Database(path: databasePath, busyTimeout: 5)
    defer { database.close() }
    let statement = try database.statement(sql)
    return try statement.run { statement in
        var rows: [[String?]] = []
        let columns = sqlite3ColumnCount(statement)
        while try statement.step() {
            rows.append((0..<columns).map { statement.string(at: $0) })
        }
        return rows
    }
}

/// `count` bytes following a pattern picked by `seed` (byte i = i × 31 + seed).
func bytes(_ count: Int, seed: UInt8 = 1) -> Data {
    // The pattern repeats every 256 bytes: build one block and append it (fast even under TSan).
    let block = Data((0..<256).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    var data = Data(capacity: count)
    while data.count + 256 <= count { data.append(block) }
    data.append(block.prefix(count - data.count))
    return data
}

func fileSize(_ path: String) -> Int64? {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
}
