#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import KVCache
import KVCacheTestSupport

/// One of several processes opening the same new cache directory at the same moment:
/// it waits on its stdin, a pipe the parent closes for all of them at once, then opens.
///
/// Protocol: `waiting` before it blocks; after the open `opened <1|0>` (1 if this
/// process's open marked the manifest as ours), then exit 0. A failed open prints
/// `E <message>` and exits 3.
struct OpenTogether {
    let directory: URL

    func run() -> Never {
        WorkerOutput.line("waiting")
        var byte: UInt8 = 0
        // Until end of file: the parent closes the pipe's write end for every worker at once.
        while true {
            let count = read(0, &byte, 1)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
        }
        var configuration = DiskCache.Configuration()
        configuration.autoTrimInterval = nil
        do {
            let cache = try DiskCache(directory: directory, configuration: configuration)
            let marked = cache.openMarkedTheManifest
            try cache.close()
            WorkerOutput.line("opened \(marked ? 1 : 0)")
        } catch {
            Output.fail("open: \(error)")
        }
        exit(0)
    }
}
