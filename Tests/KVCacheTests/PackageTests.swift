// Placeholder so the test target builds before the suites land.
import Testing
@testable import KVCache

@Test func packageBuilds() { #expect(EvictionReason.allCases.count == 6) }
