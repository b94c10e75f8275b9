import Foundation
import Testing
@testable import KVCache

/// `close()` commits what is pending and reports writes it could not commit, instead
/// of dropping them silently (issue 13, item 6); the store is closed either way.
@Suite struct DiskCloseTests {
    /// A disk configuration whose pending writes wait for close, and whose commit gives
    /// up on a held write lock quickly.
    static func waitingConfiguration() -> DiskCache.Configuration {
        .testing {
            $0.busyTimeout = .seconds(0.05)
            $0.groupCommitDelay = .seconds(3600)
        }
    }

    /// Expects `close` to throw while another connection (as another process) holds
    /// SQLite's write lock past the busy timeout, then lets the lock go.
    func expectCloseThrowsWhileTheWriteLockIsHeld(_ dir: TemporaryDirectory, _ close: () throws -> Void) throws {
        let other = try Database(path: dir.manifestPath, busyTimeout: 0)
        try other.execute("BEGIN IMMEDIATE")
        #expect(throws: KVCacheError.self) { try close() }
        try other.execute("COMMIT")
        other.close()
    }

    /// Another connection (as another process) holds SQLite's write lock past the busy
    /// timeout, so the final commit fails: close throws, and the write is not stored.
    @Test func closeThrowsWhenItsFinalCommitFailsAndStillCloses() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: Self.waitingConfiguration())
        try cache.setValue(bytes(100, seed: 1), forKey: "kept")
        try cache.flush()
        try cache.setValue(bytes(100, seed: 2), forKey: "lost")
        try expectCloseThrowsWhileTheWriteLockIsHeld(dir) { try cache.close() }
        #expect(throws: KVCacheError.closed) { try cache.value(forKey: "kept") }
        try cache.close()  // again: nothing to report
        let reopened = try DiskCache(directory: dir.url, configuration: .testing())
        defer { try? reopened.close() }
        #expect(try reopened.value(forKey: "kept") == bytes(100, seed: 1))
        #expect(try reopened.value(forKey: "lost") == nil)
    }

    /// The facade closes its disk level and reports the same failure.
    @Test func cacheCloseReportsTheDiskLevelsLostWrites() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var configuration = Cache<Data>.Configuration()
        configuration.disk = Self.waitingConfiguration()
        let cache = try Cache<Data>(directory: dir.url, configuration: configuration)
        try cache.setValue(bytes(100, seed: 3), forKey: "lost")
        try expectCloseThrowsWhileTheWriteLockIsHeld(dir) { try cache.close() }
        #expect(throws: KVCacheError.closed) { try cache.disk.value(forKey: "lost") }
    }

    /// With everything committed, close does not throw.
    @Test func closeAfterAFlushDoesNotThrow() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let cache = try DiskCache(directory: dir.url, configuration: .testing())
        try cache.setValue(bytes(100, seed: 1), forKey: "a")
        try cache.close()
        let reopened = try DiskCache(directory: dir.url, configuration: .testing())
        #expect(try reopened.value(forKey: "a") == bytes(100, seed: 1))
        try reopened.close()
    }
}
