#if Tracing
import Foundation
import InMemoryTracing
import Testing
import Tracing
@testable import KVCache

/// Package trait `Tracing`: a span per load, telling the level that answered, hit or miss,
/// and the error. Built and run by `.ci/run` with `--traits Tracing`.
@Suite struct TracingTraitTests {
    private struct Failure: Error, Equatable {}

    private func makeCache(_ dir: TemporaryDirectory, tracer: InMemoryTracer) throws -> Cache<Data> {
        var configuration = Cache<Data>.Configuration(memory: .init(countLimit: 1, autoTrimInterval: nil, policy: .lru))
        configuration.tracer = tracer
        return try Cache<Data>(name: "traced", baseDirectory: dir.url, configuration: configuration)
    }

    @Test func eachLoadIsASpanNamingTheLevelThatAnswered() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let tracer = InMemoryTracer()
        let cache = try makeCache(dir, tracer: tracer)
        defer { try? cache.close() }
        _ = try await cache.value(forKey: "a") { bytes(10) }  // computed
        _ = try await cache.value(forKey: "a") { bytes(11) }  // memory
        try await cache.setValue(bytes(12), forKey: "b")      // "a" leaves memory (count limit 1)
        _ = try await cache.value(forKey: "a") { bytes(13) }  // disk
        let spans = tracer.popFinishedSpans()
        #expect(spans.map(\.operationName) == ["kvcache.load", "kvcache.load", "kvcache.load"])
        #expect(spans.map { $0.attributes["kvcache.level"]?.toSpanAttribute() } == ["computed", "memory", "disk"])
        #expect(spans.map { $0.attributes["kvcache.hit"]?.toSpanAttribute() } == [false, true, true])
        #expect(spans.allSatisfy { $0.errors.isEmpty && $0.status == nil })
    }

    @Test func aFailedLoadRecordsItsError() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let tracer = InMemoryTracer()
        let cache = try makeCache(dir, tracer: tracer)
        defer { try? cache.close() }
        await #expect(throws: Failure()) { _ = try await cache.value(forKey: "a") { throw Failure() } }
        let spans = tracer.popFinishedSpans()
        #expect(spans.count == 1)
        #expect(spans.first?.errors.first?.error as? Failure == Failure())
        #expect(spans.first?.status?.code == .error)
        #expect(spans.first?.attributes["kvcache.level"] == nil)
    }

    @Test func aLoadIsAChildOfTheCallersSpan() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let tracer = InMemoryTracer()
        let cache = try makeCache(dir, tracer: tracer)
        defer { try? cache.close() }
        let parent = try await tracer.withSpan("request") { span in
            _ = try await cache.value(forKey: "a") { bytes(1) }
            return span.context.inMemorySpanContext?.spanID
        }
        let load = tracer.finishedSpans.first { $0.operationName == "kvcache.load" }
        #expect(parent != nil && load?.parentSpanID == parent)
    }

    @Test func withoutATracerNothingIsTracedOrWrapped() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // No tracer configured and none bootstrapped: the no-op tracer, so no tracing at all.
        let cache = try Cache<Data>(name: "untraced", baseDirectory: dir.url)
        defer { try? cache.close() }
        #expect(cache.tracer == nil)
        #expect(TracedRemoteLevel.tracer(configured: NoOpTracer()) == nil)
        #expect(TracedRemoteLevel.tracer(configured: InMemoryTracer()) != nil)
    }
}
#endif
