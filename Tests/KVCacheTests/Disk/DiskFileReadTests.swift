import Foundation
import Testing
@testable import KVCache

/// File values are read outside the cache's lock (DiskCache.value(forKey:)): the
/// lookup and the read are two steps, and what happens between them must not turn
/// a stored value into a miss, nor a broken file into a hit.
@Suite struct DiskFileReadTests {
    @Test func aReadWhoseFileWasReplacedAfterItsLookupLooksTheKeyUpAgain() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try cache.setValue(bytes(30_000, seed: 1), forKey: "k")
        try cache.flush()
        var followUps = DiskReader.FollowUps()
        guard case .file(let name, _, _) = try cache.reader.lookUp(forKey: "k", followUps: &followUps) else {
            Issue.record("a 30 KB value should be a file")
            return
        }
        // Another writer replaces the value; its commit deletes the file just looked up.
        try cache.setValue(bytes(30_000, seed: 2), forKey: "k")
        try cache.flush()
        #expect(!dir.dataFiles().contains(name))
        #expect(cache.reader.fileReadFailed(forKey: "k", filename: name, seenSwaps: 0, followUps: &followUps))
        #expect(try cache.value(forKey: "k") == bytes(30_000, seed: 2))
        let statistics = cache.statistics
        #expect(statistics.brokenEntries == 0)
        #expect(statistics.misses == 0)
        #expect(statistics.hits == 1)
    }

    @Test func aMissingFileIsAMissAndItsRowIsDropped() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try cache.setValue(bytes(30_000), forKey: "k")
        try cache.flush()
        for name in dir.dataFiles() { unlink(dir.dataPath + "/" + name) }
        #expect(try cache.value(forKey: "k") == nil)
        let statistics = cache.statistics
        #expect(statistics.brokenEntries == 1)
        #expect(statistics.misses == 1)
        #expect(statistics.hits == 0)
        try cache.flush()
        #expect(try cache.totalCount == 0)
    }
}
