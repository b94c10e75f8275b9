import ArgumentParser
import Foundation
import KVCache

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show counts and sizes (inline and in files), manifest and WAL size, access range.")

    @OptionGroup var location: CacheLocation
    @OptionGroup var output: OutputOptions

    func run() throws {
        let cache = try location.open(readOnly: true)
        defer { try? cache.close() }
        let inspection = try cache.inspect()
        if output.json {
            try Console.writeJSON(StatsOutput(inspection))
            return
        }
        Console.write("""
            directory        \(inspection.directory)
            entries          \(inspection.statistics.count) (\(inspection.expiredCount) expired, not yet removed)
            size             \(Console.bytes(inspection.statistics.size))
              inline         \(Console.count(inspection.statistics.inlineCount, "entry", "entries")), \(Console.bytes(inspection.statistics.inlineSize))
              in files       \(Console.count(inspection.statistics.fileCount, "entry", "entries")), \(Console.bytes(inspection.statistics.fileSize))
            oldest access    \(Console.date(inspection.oldestAccess))
            newest access    \(Console.date(inspection.newestAccess))
            manifest         \(Console.bytes(inspection.manifestSize)), \(Console.count(inspection.pageCount, "page")) of \
            \(inspection.pageSize) bytes, \(inspection.freePageCount) free
            WAL              \(Console.bytes(inspection.walSize))
            schema version   \(inspection.schemaVersion)
            free disk space  \(inspection.freeDiskSpace.map(Console.bytes) ?? "-")
            """)
    }
}

/// `stats --json`: sizes in bytes, dates in ISO 8601.
struct StatsOutput: Encodable {
    var directory: String
    var count: Int
    var size: Int64
    var inlineCount: Int
    var inlineSize: Int64
    var fileCount: Int
    var fileSize: Int64
    var expiredCount: Int
    var oldestAccess: Date?
    var newestAccess: Date?
    var manifestSize: Int64
    var walSize: Int64
    var pageSize: Int
    var pageCount: Int
    var freePageCount: Int
    var schemaVersion: Int
    var freeDiskSpace: Int64?

    init(_ inspection: DiskCache.Inspection) {
        directory = inspection.directory
        count = inspection.statistics.count
        size = inspection.statistics.size
        inlineCount = inspection.statistics.inlineCount
        inlineSize = inspection.statistics.inlineSize
        fileCount = inspection.statistics.fileCount
        fileSize = inspection.statistics.fileSize
        expiredCount = inspection.expiredCount
        oldestAccess = inspection.oldestAccess
        newestAccess = inspection.newestAccess
        manifestSize = inspection.manifestSize
        walSize = inspection.walSize
        pageSize = inspection.pageSize
        pageCount = inspection.pageCount
        freePageCount = inspection.freePageCount
        schemaVersion = inspection.schemaVersion
        freeDiskSpace = inspection.freeDiskSpace
    }
}
