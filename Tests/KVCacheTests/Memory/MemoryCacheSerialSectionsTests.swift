import Testing
@_spi(Benchmarks) @testable import KVCache

/// The serialized sections a benchmark reads to predict more cores (`serialSections`).
@Suite struct MemoryCacheSerialSectionsTests {
    @Test func aTimedCacheCountsAndTimesItsSections() throws {
        let cache = try MemoryCache<Int, Int>(
            configuration: .init(countLimit: 1_000, autoTrimInterval: nil), measuringSerialSections: true)
        for key in 0..<100 { cache[key] = key }
        for key in 0..<100 { cache[key] = key + 1 }
        for _ in 0..<4 {
            for key in 0..<100 { _ = cache[key] }
        }
        let sections = cache.serialSections
        #expect(sections.lockedSets == 100)
        #expect(sections.lockedSetNanoseconds > 0)
        #expect(sections.inPlaceSets == 100)
        #expect(sections.inPlaceSetNanoseconds > 0)
        #expect(sections.hits == 400)
        // One thread drops nothing: its full buffers always find the cache's lock free.
        #expect(sections.droppedUses == 0)
        #expect(sections.drains > 0)
        #expect(sections.drainNanoseconds > 0)
        #expect(sections.readWaits == 0)
    }

    @Test func anUntimedCacheCountsUsesButTimesNothing() throws {
        let cache: MemoryCache<Int, Int> = try makeCache(.init(countLimit: 1_000, autoTrimInterval: nil))
        for key in 0..<100 { cache[key] = key }
        for key in 0..<100 { cache[key] = key + 1 }
        for key in 0..<100 { _ = cache[key] }
        let sections = cache.serialSections
        #expect(sections.hits == 100)
        #expect(sections.inPlaceSets == 100)
        #expect(sections.drains == 0 && sections.lockedSets == 0)
        #expect(sections.drainNanoseconds == 0 && sections.lockedSetNanoseconds == 0 && sections.inPlaceSetNanoseconds == 0)
    }
}
