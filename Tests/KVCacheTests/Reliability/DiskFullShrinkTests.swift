import Foundation
import Testing
@testable import KVCache

/// A cache that fills its own disk must be able to shrink (issue 12, item 6): on a
/// 2 MB tmpfs filled only by the cache, with small sets committed one or a few at a
/// time, `trim(toCount:)`, `removeValue` + `flush()` and `removeAll()` succeed and
/// give space back, also after a reopen on the still-full disk, and sets work again
/// afterwards. The WAL stays bounded relative to the store while the disk fills.
@Suite(.blockingOnItsOwnThread, .serialized, .enabled(if: TmpfsMount.isAvailable)) struct DiskFullShrinkTests {
    static let valueSize = 300
    /// The bound the WAL keeps while the disk fills: the manifest's size (at least
    /// 512 KiB, for a small store) plus one small commit's frames.
    static func walBound(manifestSize: Int64) -> Int64 { max(manifestSize, 512 * 1024) + 8 * 16384 }

    static func configuration() -> DiskCache.Configuration {
        .testing { $0.groupCommitDelay = .seconds(0) }
    }

    struct Sizes: CustomStringConvertible {
        var free: Int64
        var wal: Int64
        var manifest: Int64
        var description: String { "free \(free), WAL \(wal), manifest \(manifest)" }

        init(_ url: URL) {
            free = FileStore.freeSpace(at: url.path) ?? -1
            wal = fileSize(url.path + "/manifest.sqlite-wal") ?? 0
            manifest = fileSize(url.path + "/manifest.sqlite") ?? 0
        }
    }

    /// Sets small values (`prefix<n>`) until a set or a flush throws diskFull; returns how many were set.
    func fillUntilFull(_ cache: DiskCache, prefix: String) throws -> Int {
        for index in 0..<50_000 {
            do {
                try cache.setValue(bytes(Self.valueSize, seed: UInt8(index % 256)), forKey: "\(prefix)\(index)")
                if index % 100 == 99 { try cache.flush(durability: .committed) }
            } catch let error as KVCacheError {
                guard case .diskFull = error else { throw error }
                // Whatever the failed commit dropped has been reported; settle the rest.
                _ = try? cache.flush()
                return index
            }
        }
        Issue.record("50,000 small sets never filled a 2 MB disk")
        return 50_000
    }

    /// Mounts a 2 MB tmpfs, opens a cache in it and fills the disk with small sets;
    /// with `reopen`, closes the cache, reopens it on the still-full disk and fills
    /// what the close gave back. Runs `body` on the full disk, then checks that it took no
    /// space and (with `setsAgain`) that sets work again.
    func withCacheThatFilledItsDisk(reopen: Bool, setsAgain: Bool = true, _ name: String,
                                    _ body: (DiskCache, URL, Sizes) throws -> Void) throws {
        let mount = try TmpfsMount(size: "2m")
        defer { mount.unmount() }
        let url = URL(fileURLWithPath: mount.path + "/cache")
        var cache = try DiskCache(directory: url, configuration: Self.configuration())
        defer { try? cache.close() }
        let filled = try fillUntilFull(cache, prefix: "fill")
        let full = Sizes(url)
        Reliability.report("\(name): full after \(filled) sets of \(Self.valueSize) B: \(full)")
        #expect(full.wal <= Self.walBound(manifestSize: full.manifest),
                "the WAL (\(full.wal) B) grew past its bound next to a manifest of \(full.manifest) B")
        if reopen {
            try cache.close()
            cache = try DiskCache(directory: url, configuration: Self.configuration())
            let more = try fillUntilFull(cache, prefix: "more")
            Reliability.report("\(name): reopened, full again after \(more) more sets: \(Sizes(url))")
        }
        let before = Sizes(url)
        try body(cache, url, before)
        let after = Sizes(url)
        Reliability.report("\(name): after giving space back: \(after)")
        #expect(after.free >= before.free, "space was taken, not given back: \(before) -> \(after)")
        // The space given back takes new values again.
        guard setsAgain else { return }
        for index in 0..<50 {
            try cache.setValue(bytes(Self.valueSize, seed: 7), forKey: "again\(index)")
        }
        try cache.flush()
        for index in 0..<50 { #expect(try cache.value(forKey: "again\(index)") == bytes(Self.valueSize, seed: 7)) }
    }

    @Test(arguments: [false, true]) func trimToCountSucceedsOnAFullDisk(reopen: Bool) throws {
        try withCacheThatFilledItsDisk(reopen: reopen, "trim(toCount:) reopen \(reopen)") { cache, _, _ in
            let count = try cache.totalCount
            #expect(count > 100)
            let removed = try cache.trim(toCount: count / 2)
            #expect(removed == count - count / 2)
            #expect(try cache.totalCount == count / 2)
        }
    }

    @Test(arguments: [false, true]) func removeValueAndFlushSucceedOnAFullDisk(reopen: Bool) throws {
        // Removing a few hundred scattered small rows frees room inside pages, not whole
        // pages: it commits, but new keys (appended at the table's end) may not fit.
        try withCacheThatFilledItsDisk(reopen: reopen, setsAgain: false, "removeValue+flush reopen \(reopen)") { cache, _, _ in
            let count = try cache.totalCount
            let keys = try cache.keys(limit: min(200, count / 2))
            #expect(keys.count > 10)
            for key in keys { try cache.removeValue(forKey: key) }
            try cache.flush()
            for key in keys { #expect(try cache.value(forKey: key) == nil, "\(key)") }
            #expect(try cache.totalCount == count - keys.count)
        }
    }

    @Test(arguments: [false, true]) func removeAllSucceedsOnAFullDisk(reopen: Bool) throws {
        try withCacheThatFilledItsDisk(reopen: reopen, "removeAll reopen \(reopen)") { cache, _, _ in
            try cache.removeAll()
            #expect(try cache.totalCount == 0)
        }
    }
}
