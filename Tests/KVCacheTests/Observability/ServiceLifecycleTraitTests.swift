#if ServiceLifecycle
import Foundation
import Logging
import ServiceLifecycle
import Testing
@testable import KVCache

/// Package trait `ServiceLifecycle`: a `Cache` in a `ServiceGroup` flushes and closes on
/// graceful shutdown. Built and run by `.ci/run` with `--traits ServiceLifecycle`.
@Suite struct ServiceLifecycleTraitTests {
    @Test func gracefulShutdownFlushesAndClosesTheCache() async throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make { $0.disk.groupCommitDelay = .seconds(3600) }
        try await cache.setValue(bytes(10), forKey: "queued", diskWrite: .background)
        try await cache.setValue(bytes(10), forKey: "pending")
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: cache)], logger: Logger(label: "kvcache.test")))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(cache.disk.isClosed)
        // Committed by the flush: another open sees both.
        let reopened = try DiskCache(directory: fixture.base.url.appendingPathComponent("test"), configuration: .testing())
        defer { try? reopened.close() }
        let queued = try await reopened.value(forKey: "queued")
        let pending = try await reopened.value(forKey: "pending")
        #expect(queued == bytes(10) && pending == bytes(10))
    }
}
#endif
