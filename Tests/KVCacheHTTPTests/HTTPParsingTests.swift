#if HTTP
import Foundation
@testable import KVCacheHTTP
import Testing

/// Dates, Cache-Control and byte ranges as a recipient must read them, hostile forms included.
@Suite struct HTTPParsingTests {
    @Test func theThreeDateFormsNameTheSameInstant() throws {
        let imf = try #require(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"))
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == imf)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == imf)
        #expect(imf == 784_111_777)
        #expect(HTTPDate.format(imf) == "Sun, 06 Nov 1994 08:49:37 GMT")
        // Names are read without case.
        #expect(HTTPDate.parse("sun, 06 nov 1994 08:49:37 gmt") == imf)
    }

    /// Keys are the URL with its scheme and authority lower-cased, as `lowercased()` does, so
    /// keys built before and after the fast path name the same stored responses.
    @Test(arguments: [
        ("http", "origin.example", "/a?x=1"), ("HTTPS", "Origin.EXAMPLE:8443", "/A/B?Q=Z"),
        ("http", "ÉXAMPLE.test", "/ünïcode"), ("http", "127.0.0.1:80", ""), ("", "", ""),
        ("Http", "[::1]:8080", String(repeating: "/Path", count: 2_000)), ("h\u{130}", "I\u{130}.example", "/"),
    ])
    func aKeyIsTheURLWithItsSchemeAndAuthorityLowerCased(scheme: String, authority: String, path: String) {
        let key = HTTPCache.key(scheme: scheme, authority: authority, path: path)
        #expect(key == "http:\(scheme.lowercased())://\(authority.lowercased())\(path)")
    }

    @Test func formattingRoundTripsAcrossCenturiesAndLeapDays() {
        for seconds in [0.0, 951_782_400, 1_709_164_800, 4_102_444_799, 253_402_300_799] {
            #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds, "\(HTTPDate.format(seconds))")
        }
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 +0000", "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun 06 Nov 1994 08:49:37 GMT", "Sun, 06  Nov 1994 08:49:37 GMT", "Sun, 06-Nov-1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08.49.37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT", "0", "-1", "", "  ", "Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT",
        String(repeating: "Sun, 06 Nov 1994 08:49:37 GMT ", count: 1000), "Sun, 06 Xyz 1994 08:49:37 GMT",
    ])
    func invalidDatesAreNotDates(_ value: String) {
        #expect(HTTPDate.parse(value) == nil)
    }

    @Test func cacheControlReadsNamesWithoutCaseAndKeepsTheFirstValue() {
        let control = CacheControl(["MaX-AgE=60, no-cache=\"Set-Cookie, X-A\"", "max-age=1, private"])
        #expect(control.seconds("max-age") == .seconds(60))
        #expect(control.has("private"))
        #expect(control.fieldNames("no-cache") == ["set-cookie", "x-a"])
        #expect(!control.has("public"))
    }

    @Test func deltaSecondsClampAndRejectWhatIsNotANumber() {
        #expect(CacheControl(["max-age=2147483649"]).seconds("max-age") == .seconds(2_147_483_648))
        #expect(CacheControl(["max-age=99999999999999999999999"]).seconds("max-age") == .seconds(2_147_483_648))
        #expect(CacheControl(["max-age=\"30\""]).seconds("max-age") == .seconds(30))
        for invalid in ["max-age=-1", "max-age=1.5", "max-age=a100", "max-age=100a", "max-age=", "max-age"] {
            #expect(CacheControl([invalid]).seconds("max-age") == .invalid, "\(invalid)")
        }
        #expect(CacheControl(["public"]).seconds("max-age") == nil)
    }

    @Test func commasInsideQuotesDoNotSplitDirectives() {
        let control = CacheControl(["private=\"a, b\", max-age=5, ext=\"x\\\"y, z\""])
        #expect(control.fieldNames("private") == ["a", "b"])
        #expect(control.seconds("max-age") == .seconds(5))
        #expect(control.directives["ext"] == .some("x\"y, z"))
    }

    @Test func aHostileHeaderCostsBoundedWork() {
        let many = Array(repeating: "a=1", count: 100_000).joined(separator: ",") + ", max-age=5"
        let control = CacheControl([many])
        #expect(control.directives.count <= CacheControl.directiveLimit)
        #expect(control.seconds("max-age") == nil)
    }

    @Test func byteRanges() {
        #expect(ByteRange.parse("bytes=0-1")?.resolve(length: 10) == 0..<2)
        #expect(ByteRange.parse("bytes=5-")?.resolve(length: 10) == 5..<10)
        #expect(ByteRange.parse("bytes=-3")?.resolve(length: 10) == 7..<10)
        #expect(ByteRange.parse("bytes=-30")?.resolve(length: 10) == 0..<10)
        #expect(ByteRange.parse("bytes=4-100")?.resolve(length: 10) == 4..<10)
        #expect(ByteRange.parse("bytes=10-")?.resolve(length: 10) == nil)
        #expect(ByteRange.parse("bytes=-0")?.resolve(length: 10) == nil)
        for unsupported in ["bytes=0-1,3-4", "items=0-1", "bytes=2-1", "bytes=a-b", "bytes=-", "bytes=99999999999999999999-"] {
            #expect(ByteRange.parse(unsupported) == nil, "\(unsupported)")
        }
    }
}
#endif
