#if Logging
import Foundation
import Logging
import Testing
@testable import KVCache

/// Package trait `Logging`: what fails with no caller to see it reaches the configured
/// swift-log `Logger`. Built and run by `.ci/run` with `--traits Logging`.
@Suite struct LoggingTraitTests {
    /// Collects what a logger was told.
    final class Collected: Sendable {
        let messages = MutexBox<[(level: Logger.Level, message: String)]>([])

        var handler: CollectingHandler { CollectingHandler(collected: self) }
    }

    struct CollectingHandler: LogHandler {
        let collected: Collected
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            collected.messages.withLock { $0.append((event.level, event.message.description)) }
        }
    }

    @Test func aRebuiltManifestIsLogged() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try DiskCache(directory: dir.url, configuration: .testing()).close()
        // Not a database any more: the next open moves it aside and starts empty.
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: dir.manifestPath))
        let collected = Collected()
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.logger = Logger(label: "kvcache.test") { _ in collected.handler }
        })
        defer { try? cache.close() }
        let messages = collected.messages.withLock { $0 }
        #expect(messages.contains { $0.level == .notice && $0.message.contains("moved to corrupt/") }, "\(messages)")
    }

    @Test func aStaleValueServedByFailSafeIsLogged() async throws {
        struct SourceDown: Error {}
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let collected = Collected()
        let cache = try fixture.make {
            $0.failSafe = .init(maxStaleness: .seconds(60))
            $0.disk.logger = Logger(label: "kvcache.test") { _ in collected.handler }
        }
        defer { try? cache.close() }
        try await cache.setValue(bytes(3), forKey: "k", expiration: .after(.seconds(10)))
        fixture.clock.advance(by: 11)
        let served = try await cache.result(forKey: "k", orCompute: { throw SourceDown() })
        #expect(served.isStale)
        let messages = collected.messages.withLock { $0 }
        #expect(messages.contains { $0.level == .warning && $0.message.contains("fail-safe") && $0.message.contains("SourceDown") },
                "\(messages)")
    }

    @Test func aFailedBackgroundTrimIsLogged() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let collected = Collected()
        let cache = try DiskCache(directory: dir.url, configuration: .testing {
            $0.logger = Logger(label: "kvcache.test") { _ in collected.handler }
            $0.countLimit = 1
        })
        for index in 0..<3 { try cache.setValue(bytes(10), forKey: "k\(index)") }
        try cache.close()
        // A background pass on a closed cache fails; it has no caller but the log.
        cache.trimToLimits(periodic: true)
        let messages = collected.messages.withLock { $0 }
        #expect(messages.contains { $0.level == .warning && $0.message.contains("failed") }, "\(messages)")
    }
}
#endif
