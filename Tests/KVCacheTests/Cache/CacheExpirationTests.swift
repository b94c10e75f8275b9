import Foundation
import Testing
@testable import KVCache

struct CacheExpirationTests {
    @Test func aLifetimeAppliesToBothLevels() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        try cache.setValue(bytes(10), forKey: "a", expiration: .after(.seconds(10)))

        fixture.clock.advance(by: 9)
        #expect(try cache.result(forKey: "a").source == .memory)
        fixture.clock.advance(by: 2)

        #expect(try cache.result(forKey: "a").source == .none)
        #expect(try cache.disk.value(forKey: "a") == nil)
    }

    @Test func aPromotedValueExpiresWithItsDiskEntry() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        try cache.setValue(bytes(10), forKey: "a", expiration: .after(.seconds(10)))
        fixture.clock.advance(by: 6)
        cache.memory.removeAll()

        #expect(try cache.result(forKey: "a").source == .disk)
        fixture.clock.advance(by: 3)
        #expect(try cache.result(forKey: "a").source == .memory)
        fixture.clock.advance(by: 2)

        #expect(cache.memory.value(forKey: "a") == nil)
        #expect(try cache.result(forKey: "a").source == .none)
    }

    @Test func aDatedExpirationIsKeptOnPromotion() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        let deadline = Date(timeIntervalSince1970: fixture.clock.now + 100)
        try cache.setValue(bytes(10), forKey: "a", expiration: .at(deadline))
        cache.memory.removeAll()
        #expect(try cache.result(forKey: "a").source == .disk)

        fixture.clock.advance(by: 101)

        #expect(cache.memory.value(forKey: "a") == nil)
    }

    @Test func aPromotionExtendsTheLifetimeWhenTheDiskExtendsOnAccess() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make { $0.disk.extendsExpirationOnAccess = true }
        try cache.setValue(bytes(10), forKey: "a", expiration: .after(.seconds(10)))
        fixture.clock.advance(by: 8)
        cache.memory.removeAll()
        #expect(try cache.result(forKey: "a").source == .disk)

        fixture.clock.advance(by: 8)

        #expect(try cache.result(forKey: "a").source == .memory)
    }

    @Test func aQueuedBackgroundWriteExpiresFromTheSetCall() throws {
        let fixture = CacheFixture()
        defer { fixture.remove() }
        let cache = try fixture.make()
        try cache.setValue(bytes(3_000_000), forKey: "slow", diskWrite: .background)
        try cache.setValue(bytes(10), forKey: "a", expiration: .after(.seconds(10)), diskWrite: .background)
        cache.memory.removeAll()

        fixture.clock.advance(by: 11)

        #expect(try cache.value(forKey: "a") == nil)
        #expect(try !cache.contains("a"))
        try cache.waitForBackgroundWrites()
        #expect(try cache.disk.value(forKey: "a") == nil)
    }
}
