import Foundation
import KVCacheTestSupport
import KVCache

/// Opens the cache the parent named, with no timers of its own (the parent
/// decides when to trim), and tells the parent it is ready; exits on failure.
func openCacheAndReport(at directory: URL) -> DiskCache {
    var configuration = DiskCache.Configuration()
    configuration.autoTrimInterval = nil
    do {
        let cache = try DiskCache(directory: directory, configuration: configuration)
        WorkerOutput.line("ready")
        return cache
    } catch {
        Output.fail("open: \(error)")
    }
}
