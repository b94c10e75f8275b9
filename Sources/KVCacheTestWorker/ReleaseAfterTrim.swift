import Foundation
import KVCache
import KVCacheTestSupport

/// Issue 38's reproduction: a `Cache<Data>` whose disk level takes `entries` values
/// written directly through `cache.disk` (each one a change reported to the cache), a
/// flush, a trim of the disk level to half of them, then the release of the cache. A
/// chain that grows with each reported change overflowed the stack at the release.
///
/// Protocol: `trimmed <removed>` once the trim returned, `released` once the cache is
/// gone, then exit 0. Errors print `E <message>`; a crash ends the process by signal.
struct ReleaseAfterTrim {
    let directory: URL
    let entries: Int

    func run() -> Never {
        do {
            try fillTrimAndRelease()
        } catch {
            Output.fail("\(error)")
        }
        WorkerOutput.line("released")
        exit(0)
    }

    private func fillTrimAndRelease() throws {
        var configuration = Cache<Data>.Configuration()
        configuration.disk.autoTrimInterval = nil
        let cache = try Cache<Data>(directory: directory, configuration: configuration)
        let value = Data(count: 100)
        var start = 0
        // In batches: one call per thousand values, each value still one reported change.
        while start < entries {
            let end = min(start + 1_000, entries)
            try cache.disk.setValues(Dictionary(uniqueKeysWithValues: (start..<end).map { ("e\($0)", value) }))
            start = end
        }
        try cache.flush()
        let removed = try cache.disk.trim(toCount: entries / 2)
        WorkerOutput.line("trimmed \(removed)")
        // The cache is released when this returns: its last reference goes here.
    }
}
