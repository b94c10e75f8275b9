import Testing
@testable import KVCache

@Test func smoke() {
    let cache = MemoryCache<String, Int>()
    cache["a"] = 1
    #expect(cache["a"] == 1)
}
