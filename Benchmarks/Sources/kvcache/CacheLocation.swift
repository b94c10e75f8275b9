import ArgumentParser
import Foundation
import KVCache

/// The cache directory argument, and how the tool opens it.
struct CacheLocation: ParsableArguments {
    @Argument(help: "The cache directory.", completion: .directory)
    var directory: String

    /// Opens the cache for maintenance: no automatic trims, and the orphan sweep at
    /// open deletes nothing (an infinite grace period), so only the command changes
    /// the directory. Unless `creating`, a directory without a cache is an error
    /// rather than a new empty cache. `readOnly` (the commands that only read) opens
    /// it read-only: nothing is created, moved, rebuilt or deleted, and a damaged
    /// manifest is reported (`KVCacheError.corrupt`, exit 3) for `verify --repair`.
    func open(creating: Bool = false, readOnly: Bool = false) throws -> DiskCache {
        let url = URL(fileURLWithPath: directory)
        if !creating, !FileManager.default.fileExists(atPath: url.appendingPathComponent("manifest.sqlite").path) {
            throw ToolError.noCache(path: directory)
        }
        var configuration = DiskCache.Configuration()
        configuration.isReadOnly = readOnly
        configuration.autoTrimInterval = nil
        configuration.orphanGracePeriod = .seconds(Int64.max)
        let cache = try DiskCache(directory: url, configuration: configuration)
        if cache.statistics.rebuilds > 0 {
            Console.writeError("kvcache: warning: the manifest was corrupt; it was moved to "
                + "\(directory)/corrupt/ and an empty one created")
        }
        return cache
    }
}

/// `--json`, for commands whose output a script may read.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print the result as JSON.")
    var json = false
}
