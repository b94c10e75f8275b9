#if HTTP
import Foundation
import HTTPTypes
import KVCache
@testable import KVCacheHTTP
import Testing

/// Which stored responses are served, for how long, and with what Age (RFC 9111 §4.2).
@Suite struct HTTPCacheFreshnessTests {
    @Test func aFreshResponseIsServedUntilItsMaxAgeThenValidated() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin { request, number in
            if number == 2 {
                #expect(request.headerFields[.ifNoneMatch] == "\"v1\"")
                return (HTTPResponse(status: .notModified, headerFields: [.cacheControl: "max-age=60", .init("X-New")!: "1"]), Data())
            }
            return (HTTPResponse(status: .ok, headerFields: [.cacheControl: "max-age=60", .eTag: "\"v1\""]), Data("one".utf8))
        }
        #expect(try await fixture.get("/a", from: origin).outcome == .miss)
        fixture.clock.advance(59)
        let hit = try await fixture.get("/a", from: origin)
        #expect(hit.outcome == .hit)
        #expect(hit.text == "one")
        #expect(hit.response.headerFields[.age] == "59")
        fixture.clock.advance(2)
        let revalidated = try await fixture.get("/a", from: origin)
        #expect(revalidated.outcome == .revalidated)
        #expect(revalidated.text == "one")
        #expect(revalidated.response.headerFields[.init("X-New")!] == "1")
        #expect(origin.count == 2)
        // The 304 made it fresh again.
        #expect(try await fixture.get("/a", from: origin).outcome == .hit)
    }

    @Test func aSharedCacheUsesSMaxAgeAndAPrivateOneIgnoresIt() async throws {
        for mode in [HTTPCache.Mode.shared, .private] {
            let fixture = try HTTPCacheFixture(mode: mode)
            defer { fixture.remove() }
            let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=10, s-maxage=100"])
            _ = try await fixture.get("/a", from: origin)
            fixture.clock.advance(50)
            let outcome = try await fixture.get("/a", from: origin).outcome
            #expect(outcome == (mode == .shared ? .hit : .miss), "\(mode)")
        }
    }

    @Test func expiresCountsFromTheOriginsDateAndAnInvalidOneIsAlreadyStale() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let valid = HTTPTestOrigin(fields: [.date: fixture.date, .expires: HTTPDate.format(fixture.clock.now + 30)])
        let invalid = HTTPTestOrigin(fields: [.date: fixture.date, .expires: "0"])
        _ = try await fixture.get("/valid", from: valid)
        _ = try await fixture.get("/invalid", from: invalid)
        fixture.clock.advance(10)
        #expect(try await fixture.get("/valid", from: valid).outcome == .hit)
        #expect(try await fixture.get("/invalid", from: invalid).outcome == .miss)
    }

    @Test func ageFromTheOriginAndTheResidentTimeAddUp() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100", .age: "40"])
        _ = try await fixture.get("/a", from: origin)
        fixture.clock.advance(30)
        let hit = try await fixture.get("/a", from: origin)
        #expect(hit.response.headerFields[values: .age] == ["70"])
        // One Age, in whole seconds, that moves on as the clock does (hits within a second
        // share the answer built for the first).
        #expect(try await fixture.get("/a", from: origin).response.headerFields[values: .age] == ["70"])
        fixture.clock.advance(0.5)
        #expect(try await fixture.get("/a", from: origin).response.headerFields[values: .age] == ["70"])
        fixture.clock.advance(0.6)
        #expect(try await fixture.get("/a", from: origin).response.headerFields[values: .age] == ["71"])
        fixture.clock.advance(29.9)
        #expect(try await fixture.get("/a", from: origin).outcome == .miss)
    }

    @Test func heuristicFreshnessIsATenthOfTheTimeSinceLastModified() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.date: fixture.date, .lastModified: HTTPDate.format(fixture.clock.now - 1000)])
        _ = try await fixture.get("/a", from: origin)
        fixture.clock.advance(99)
        #expect(try await fixture.get("/a", from: origin).outcome == .hit)
        fixture.clock.advance(2)
        let validation = try await fixture.get("/a", from: origin)
        #expect(validation.outcome == .miss)
        #expect(origin.requests.last?.headerFields[.ifModifiedSince] != nil)
    }

    @Test func requestDirectivesLimitWhatIsServed() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100"])
        _ = try await fixture.get("/a", from: origin)
        fixture.clock.advance(50)
        #expect(try await fixture.get("/a", [.cacheControl: "max-age=10"], from: origin).outcome == .miss)
        fixture.clock.advance(50)
        #expect(try await fixture.get("/a", [.cacheControl: "min-fresh=60"], from: origin).outcome == .miss)
        #expect(try await fixture.get("/a", [.cacheControl: "no-cache"], from: origin).outcome == .miss)
        #expect(origin.count == 4)
        fixture.clock.advance(150)
        #expect(try await fixture.get("/a", [.cacheControl: "max-stale=10"], from: origin).outcome == .miss)
        fixture.clock.advance(150)
        #expect(try await fixture.get("/a", [.cacheControl: "max-stale=60"], from: origin).outcome == .staleHit)
        #expect(try await fixture.get("/a", [.cacheControl: "max-stale"], from: origin).outcome == .staleHit)
        #expect(origin.count == 5)
    }

    @Test func onlyIfCachedAnswers504WithoutAStoredResponse() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin(fields: [.cacheControl: "max-age=100"])
        let answer = try await fixture.get("/a", [.cacheControl: "only-if-cached"], from: origin)
        #expect(answer.outcome == .unsatisfiable)
        #expect(answer.response.status == .gatewayTimeout)
        #expect(origin.count == 0)
        _ = try await fixture.get("/a", from: origin)
        #expect(try await fixture.get("/a", [.cacheControl: "only-if-cached"], from: origin).outcome == .hit)
    }

    @Test func staleIfErrorAndAnUnreachableOriginServeStaleUnlessTheResponseForbidsIt() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        struct Unreachable: Error {}
        for (path, control, servesStale) in [
            ("/sie", "max-age=1, stale-if-error=100", true), ("/plain", "max-age=1", true),
            ("/must", "max-age=1, must-revalidate", false), ("/proxy", "max-age=1, proxy-revalidate", false),
        ] {
            let origin = HTTPTestOrigin { _, number in
                if number > 1 { throw Unreachable() }
                return (HTTPResponse(status: .ok, headerFields: [.cacheControl: control]), Data("stored".utf8))
            }
            _ = try await fixture.get(path, from: origin)
            fixture.clock.advance(10)
            if servesStale {
                let answer = try await fixture.get(path, from: origin)
                #expect(answer.outcome == .staleHit, "\(control)")
                #expect(answer.text == "stored")
            } else {
                await #expect(throws: Unreachable.self, "\(control)") { try await fixture.get(path, from: origin) }
            }
        }
        // A 500 is served stale only where stale-if-error allows it.
        let failing = HTTPTestOrigin { _, number in
            number == 1 ? (HTTPResponse(status: .ok, headerFields: [.cacheControl: "max-age=1, stale-if-error=5"]), Data("a".utf8))
                : (HTTPResponse(status: .internalServerError), Data())
        }
        _ = try await fixture.get("/500", from: failing)
        fixture.clock.advance(3)
        #expect(try await fixture.get("/500", from: failing).outcome == .staleHit)
        fixture.clock.advance(10)
        #expect(try await fixture.get("/500", from: failing).response.status == .internalServerError)
    }

    @Test func staleWhileRevalidateServesStaleAndRefreshesInTheBackground() async throws {
        let fixture = try HTTPCacheFixture()
        defer { fixture.remove() }
        let origin = HTTPTestOrigin { _, number in
            (HTTPResponse(status: .ok, headerFields: [.cacheControl: "max-age=1, stale-while-revalidate=60"]), Data("v\(number)".utf8))
        }
        _ = try await fixture.get("/a", from: origin)
        fixture.clock.advance(10)
        let stale = try await fixture.get("/a", from: origin)
        #expect(stale.outcome == .staleHit)
        #expect(stale.text == "v1")
        await fixture.cache.waitForBackgroundRevalidations()
        #expect(origin.count == 2)
        let fresh = try await fixture.get("/a", from: origin)
        #expect(fresh.outcome == .hit)
        #expect(fresh.text == "v2")
    }
}
#endif
