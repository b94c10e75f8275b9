#if Tracing
import Foundation
import InMemoryTracing
import Testing
import Tracing
@testable import KVCache
@testable import KVCacheRedis

/// Package trait `Tracing`, against a real Redis: every call to the remote level is a client
/// span, the child of the load that made it. Built and run by `.ci/run` with `--traits Tracing`.
@Suite(.enabled(if: RedisTestServer.url != nil, RedisTestServer.skipReason))
struct RedisTracingTests {
    @Test func remoteCallsAreSpansUnderTheirLoad() async throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let tracer = InMemoryTracer()
        let writer = try Node(namespace: namespace)
        let reader = try Node(namespace: namespace, configure: { $0.tracer = tracer })
        try await writer.cache.setValue(bytes(100), forKey: "shared")
        #expect(reader.waitForChanges(1))
        tracer.clearFinishedSpans()

        let value = try await reader.cache.value(forKey: "shared") { bytes(1) }
        #expect(value == bytes(100))
        _ = try await reader.cache.value(forKey: "fresh") { bytes(2) }  // a remote miss, computed, written back
        let spans = tracer.popFinishedSpans()
        let loads = spans.filter { $0.operationName == "kvcache.load" }
        #expect(loads.map { $0.attributes["kvcache.level"]?.toSpanAttribute() } == ["remote", "computed"])
        let gets = spans.filter { $0.operationName == "kvcache.remote.get" }
        #expect(gets.map { $0.attributes["kvcache.hit"]?.toSpanAttribute() } == [true, false])
        #expect(gets.map(\.parentSpanID) == loads.map { Optional($0.spanID) })
        #expect(gets.allSatisfy { $0.kind == .client })
        let set = spans.first { $0.operationName == "kvcache.remote.set" }
        #expect(set?.parentSpanID == loads.last?.spanID)
        #expect(set?.attributes["kvcache.bytes"]?.toSpanAttribute() == 2)
        // The level as configured is wrapped only because there is a tracer.
        #expect(reader.cache.remote is TracedRemoteLevel)
        #expect(!(writer.cache.remote is TracedRemoteLevel))
    }

    @Test func aFailedRemoteCallRecordsItsError() async throws {
        let tracer = InMemoryTracer()
        // A port nothing listens on: every call fails (and is counted, never thrown, by the cache).
        let level = try RedisTestServer.level(namespace: RedisTestServer.uniqueNamespace(),
                                              address: try RedisAddress("redis://127.0.0.1:1"))
        let node = try Node(level: level) { $0.tracer = tracer }
        _ = try await node.cache.value(forKey: "k") { bytes(3) }
        let gets = tracer.finishedSpans.filter { $0.operationName == "kvcache.remote.get" }
        #expect(gets.count == 1)
        #expect(gets.first?.errors.first?.error is RemoteLevelError)
        #expect(gets.first?.status?.code == .error)
    }
}
#endif
