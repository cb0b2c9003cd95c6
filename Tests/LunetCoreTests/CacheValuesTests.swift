import XCTest
@testable import LunetCore

/// Cache-Control, HTTP-date, keys, host-rule patterns, digests: values without a cache.
final class CacheValuesTests: XCTestCase {
    // MARK: Cache-Control (RFC 9111 §5.2)

    func testCacheControlDirectivesTable() {
        struct Case { let value: String; let check: (CacheControl) -> Bool; let line: UInt }
        let cases: [Case] = [
            Case(value: "max-age=60", check: { $0.maxAge == 60 }, line: #line),
            Case(value: "MAX-AGE=60", check: { $0.maxAge == 60 }, line: #line),                       // names ignore case
            Case(value: "max-age=\"60\"", check: { $0.maxAge == 60 }, line: #line),                   // quoted form accepted (§5.2)
            Case(value: "max-age=60, max-age=60", check: { $0.maxAge == 60 }, line: #line),           // the same value again
            Case(value: "max-age=abc", check: { $0.maxAge == 0 }, line: #line),                       // invalid: stale
            Case(value: "max-age=-1", check: { $0.maxAge == 0 }, line: #line),
            Case(value: "max-age", check: { $0.maxAge == 0 }, line: #line),
            Case(value: "max-age=99999999999999999999", check: { $0.maxAge == 2_147_483_648 }, line: #line), // §1.2.2
            Case(value: "s-maxage=30", check: { $0.sMaxAge == 30 && $0.maxAge == nil }, line: #line),
            Case(value: "no-store", check: { $0.noStore }, line: #line),
            Case(value: "no-cache", check: { $0.noCache && $0.noCacheFields.isEmpty }, line: #line),
            Case(value: "no-cache=\"Set-Cookie, X-Token\"", check: { !$0.noCache && $0.noCacheFields == ["set-cookie", "x-token"] }, line: #line),
            Case(value: "no-cache=\"a\", no-cache", check: { $0.noCache && $0.noCacheFields == ["a"] }, line: #line),
            Case(value: "no-cache=x-one", check: { $0.noCacheFields == ["x-one"] }, line: #line),
            Case(value: "must-revalidate, proxy-revalidate", check: { $0.mustRevalidate && $0.proxyRevalidate }, line: #line),
            Case(value: "private", check: { $0.isPrivate }, line: #line),
            Case(value: "private=\"Set-Cookie\"", check: { !$0.isPrivate && $0.privateFields == ["set-cookie"] }, line: #line),
            Case(value: "public, immutable", check: { $0.isPublic && $0.immutable }, line: #line),
            Case(value: "max-stale", check: { $0.maxStale == Int.max }, line: #line),
            Case(value: "max-stale=30", check: { $0.maxStale == 30 }, line: #line),
            Case(value: "max-stale=x", check: { $0.maxStale == nil }, line: #line),
            Case(value: "min-fresh=20", check: { $0.minFresh == 20 }, line: #line),
            Case(value: "only-if-cached", check: { $0.onlyIfCached }, line: #line),
            Case(value: "stale-while-revalidate=30, stale-if-error=60", check: { $0.staleWhileRevalidate == 30 && $0.staleIfError == 60 }, line: #line),
            Case(value: "must-understand, no-store", check: { $0.mustUnderstand && $0.noStore }, line: #line),
            Case(value: "no-transform", check: { $0.noTransform }, line: #line),
            Case(value: "community=\"UCI\", foo", check: {
                $0.extensions == [.init(name: "community", value: "UCI"), .init(name: "foo", value: nil)] }, line: #line),
            Case(value: "  max-age=5 ,, no-store  ", check: { $0.maxAge == 5 && $0.noStore }, line: #line),  // OWS, empty members
            Case(value: "no-cache=\"a, \\\"b\\\"\", max-age=1", check: { $0.noCacheFields == ["a", "\"b\""] && $0.maxAge == 1 }, line: #line),
            Case(value: "", check: { $0.isEmpty }, line: #line),
            Case(value: ",,,", check: { $0.isEmpty }, line: #line),
            Case(value: "=5", check: { $0.isEmpty }, line: #line),
        ]
        for c in cases {
            XCTAssertTrue(c.check(CacheControl(parsing: c.value)), "Cache-Control: \(c.value) → \(CacheControl(parsing: c.value))", line: c.line)
        }
    }

    /// RFC 9111 §4.2.1: "When there is more than one value present for a given directive (e.g.,
    /// two Expires header field lines or multiple Cache-Control: max-age directives), either the
    /// first occurrence should be used or the response should be considered stale. If directives
    /// conflict (e.g., both max-age and no-cache are present), the most restrictive directive
    /// should be honored. Caches are encouraged to consider responses that have invalid freshness
    /// information (e.g., a max-age directive with non-integer content) to be stale."
    /// §5.2: directive names compare case-insensitively, and "recipients ought to accept both
    /// forms [token and quoted-string], even if a specific form is required for generation".
    /// RFC 9110 §5.6 has no whitespace around "=" in `token [ "=" ( token / quoted-string ) ]`.
    /// The decisions (the table in docs/cache.md, "Cache-Control edge cases"):
    func testCacheControlEdgeCasesDecideAsRFC9111Says() {
        struct Case { let value: String; let maxAge: Int?; let line: UInt }
        let maxAges: [Case] = [
            Case(value: "max-age=100", maxAge: 100, line: #line),
            Case(value: "MAX-AGE=100", maxAge: 100, line: #line),                 // names without case
            Case(value: "Max-Age=\"100\"", maxAge: 100, line: #line),             // quoted form accepted
            Case(value: "max-age=100, max-age=100", maxAge: 100, line: #line),    // repeated, same value
            Case(value: "max-age=100, max-age=200", maxAge: 0, line: #line),      // two values: stale
            Case(value: "max-age=200, MAX-AGE=100", maxAge: 0, line: #line),
            Case(value: "max-age=100, max-age=abc", maxAge: 0, line: #line),
            Case(value: "max-age = 100", maxAge: 0, line: #line),                 // spaces around "=": invalid, stale
            Case(value: "max-age =100", maxAge: 0, line: #line),
            Case(value: "max-age= 100", maxAge: 0, line: #line),
            Case(value: "max-age=1.5", maxAge: 0, line: #line),                   // not delta-seconds: stale
            Case(value: "max-age=a100", maxAge: 0, line: #line),
            Case(value: "max-age=100a", maxAge: 0, line: #line),
            Case(value: "max-age=\"100a\"", maxAge: 0, line: #line),
            Case(value: "max-age=\"\"", maxAge: 0, line: #line),
            Case(value: "max-age=", maxAge: 0, line: #line),
            Case(value: "max-age=+100", maxAge: 0, line: #line),
            Case(value: "max-age=100 junk", maxAge: 0, line: #line),              // a malformed member: stale
            Case(value: "max-age=100;x=1", maxAge: 0, line: #line),
            Case(value: "max-age=\"100", maxAge: 0, line: #line),                  // unclosed quote
            Case(value: "max-agex=100", maxAge: nil, line: #line),                // another directive
            Case(value: "public", maxAge: nil, line: #line),
        ]
        for c in maxAges {
            XCTAssertEqual(CacheControl(parsing: c.value).maxAge, c.maxAge, "Cache-Control: \(c.value)", line: c.line)
        }
        // A response whose max-age is invalid is stale, never heuristically fresh.
        for value in ["max-age=1.5", "max-age = 60", "max-age=60, max-age=120"] {
            let f = CacheRules.freshnessLifetime(status: 200, headers: HTTPHeaders([("Cache-Control", value), ("Date", HTTPDate.format(cacheT0)),
                                                                                   ("Last-Modified", HTTPDate.format(cacheT0 - 86400))]),
                                                 responseTime: cacheT0)
            XCTAssertEqual(f.lifetime, 0, value)
            XCTAssertFalse(f.heuristic, value)
        }
        // Malformed restrictive directives keep their most restrictive reading; malformed
        // permissive ones are dropped.
        let bad = CacheControl(parsing: "no-cache = \"a\", private= x, no-store junk, must-revalidate=1, public junk, immutable=, max-stale = 10, stale-if-error=1.5, must-understand x")
        XCTAssertTrue(bad.noCache, "a malformed no-cache is the bare one")
        XCTAssertTrue(bad.isPrivate)
        XCTAssertTrue(bad.noStore)
        XCTAssertTrue(bad.mustRevalidate)
        XCTAssertFalse(bad.isPublic)
        XCTAssertFalse(bad.immutable)
        XCTAssertNil(bad.maxStale)
        XCTAssertNil(bad.staleIfError)
        XCTAssertFalse(bad.mustUnderstand)
        XCTAssertTrue(CacheControl(parsing: "no-cache=\"unclosed, max-age=1").noCache, "an unclosed quote swallows the rest")
        // Two Expires lines that disagree: stale (§4.2.1); the same date twice is that date.
        let expires = { (lines: [String]) in
            CacheRules.freshnessLifetime(status: 200, headers: HTTPHeaders([("Date", HTTPDate.format(cacheT0))] + lines.map { ("Expires", $0) }),
                                         responseTime: cacheT0).lifetime
        }
        XCTAssertEqual(expires([HTTPDate.format(cacheT0 + 60), HTTPDate.format(cacheT0 + 60)]), 60)
        XCTAssertEqual(expires([HTTPDate.format(cacheT0 + 60), HTTPDate.format(cacheT0 + 600)]), 0)
        XCTAssertEqual(expires([HTTPDate.format(cacheT0 + 60), "0"]), 0)
    }

    /// RFC 9110 §14.1.2 (byte ranges: "first-last", "first-", "-suffix"; a last position past
    /// the end means the end), §14.4 (Content-Range: "bytes first-last/complete-length", with
    /// "*" for an unknown length), §8.8.3 (a strong ETag has no "W/").
    func testByteRangesAndContentRanges() {
        XCTAssertEqual(CacheRanges.single("bytes=0-99"), .from(0, last: 99))
        XCTAssertEqual(CacheRanges.single("Bytes = 5-"), nil)            // no spaces around "=" in the grammar
        XCTAssertEqual(CacheRanges.single("BYTES=5-"), .from(5, last: nil))
        XCTAssertEqual(CacheRanges.single("bytes=-20"), .suffix(20))
        for bad in ["bytes=0-1,5-6", "bytes=5-1", "bytes=-0", "bytes=-", "bytes=a-1", "items=0-1", "bytes=0x-1", ""] {
            XCTAssertNil(CacheRanges.single(bad), bad)
        }
        XCTAssertEqual(CacheRanges.resolve(.from(0, last: 99), length: 10), 0...9)
        XCTAssertEqual(CacheRanges.resolve(.from(3, last: nil), length: 10), 3...9)
        XCTAssertEqual(CacheRanges.resolve(.suffix(4), length: 10), 6...9)
        XCTAssertEqual(CacheRanges.resolve(.suffix(40), length: 10), 0...9)
        XCTAssertNil(CacheRanges.resolve(.from(10, last: nil), length: 10))
        XCTAssertNil(CacheRanges.resolve(.suffix(1), length: 0))
        XCTAssertTrue(CacheRanges.contentRange("bytes 0-4/10")! == (0...4, 10))
        XCTAssertTrue(CacheRanges.contentRange("bytes 5-9/*")! == (5...9, nil))
        for bad in ["bytes 5-10/10", "bytes 4-3/10", "bytes */10", "items 0-1/2", "bytes 0-1"] { XCTAssertNil(CacheRanges.contentRange(bad), bad) }
        XCTAssertEqual(CacheRanges.strongValidator(HTTPHeaders([("ETag", "\"a\"")])), "\"a\"")
        XCTAssertNil(CacheRanges.strongValidator(HTTPHeaders([("ETag", "W/\"a\"")])))
        XCTAssertNil(CacheRanges.strongValidator(HTTPHeaders()))
        let a: [UInt8] = Array("abcd".utf8), b: [UInt8] = Array("XYZ".utf8)
        a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in
                XCTAssertEqual(CacheRanges.combined(older: (0...3, pa), newer: (4...6, pb)).map { String(decoding: $0.bytes, as: UTF8.self) }, "abcdXYZ")
                XCTAssertEqual(CacheRanges.combined(older: (0...3, pa), newer: (2...4, pb)).map { String(decoding: $0.bytes, as: UTF8.self) }, "abXYZ")
                XCTAssertEqual(CacheRanges.combined(older: (5...8, pa), newer: (1...3, pb)).map { String(decoding: $0.bytes, as: UTF8.self) }, nil)
            }
        }
    }

    func testCacheControlCombinesFieldLines() {
        let cc = CacheControl(HTTPHeaders([("Cache-Control", "max-age=10"), ("cache-control", "must-revalidate"), ("Cache-Control", "max-age=99")]))
        XCTAssertEqual(cc.maxAge, 0, "two max-age values, on two lines, still conflict: stale")
        XCTAssertTrue(cc.mustRevalidate)
    }

    func testPragmaNoCacheCountsOnlyWithoutCacheControl() {
        XCTAssertTrue(CacheRules.requestCacheControl(HTTPHeaders([("Pragma", "no-cache")])).noCache)
        XCTAssertFalse(CacheRules.requestCacheControl(HTTPHeaders([("Pragma", "no-cache"), ("Cache-Control", "max-age=5")])).noCache)
    }

    // MARK: HTTP-date (RFC 9110 §5.6.7)

    func testHTTPDateParsesTheThreeForms() {
        // RFC 9110 §5.6.7's examples: the same instant in each form.
        let instant = 784_111_777.0
        XCTAssertEqual(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"), instant)
        XCTAssertEqual(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: cacheT0), instant)
        XCTAssertEqual(HTTPDate.parse("Sun Nov  6 08:49:37 1994"), instant)
        XCTAssertEqual(HTTPDate.parse("Sun Nov 16 08:49:37 1994"), instant + 10 * 86400)
        XCTAssertEqual(HTTPDate.parse("  Sun, 06 Nov 1994 08:49:37 GMT "), instant)        // surrounding OWS
        // RFC 9111 §5.3's Expires example.
        XCTAssertEqual(HTTPDate.parse("Thu, 01 Dec 1994 16:00:00 GMT"), 786_297_600)
        XCTAssertEqual(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT"), 0)
        XCTAssertEqual(HTTPDate.parse("Thu, 29 Feb 2024 12:00:00 GMT"), 1_709_208_000)
        XCTAssertEqual(HTTPDate.parse("Wed, 31 Dec 1969 23:59:59 GMT"), -1)
        XCTAssertEqual(HTTPDate.parse("Sat, 31 Dec 2016 23:59:60 GMT"), 1_483_228_800)      // a leap second
    }

    func testHTTPDateRFC850TwoDigitYears() {
        // "more than 50 years in the future" is taken as the past century.
        let in2023 = cacheT0
        XCTAssertEqual(HTTPDate.parse("Sunday, 01-Jan-73 00:00:00 GMT", now: in2023), HTTPDate.parse("Sun, 01 Jan 2073 00:00:00 GMT"))
        XCTAssertEqual(HTTPDate.parse("Tuesday, 01-Jan-74 00:00:00 GMT", now: in2023), HTTPDate.parse("Tue, 01 Jan 1974 00:00:00 GMT"))
        XCTAssertEqual(HTTPDate.parse("Friday, 01-Jan-44 00:00:00 GMT", now: in2023), HTTPDate.parse("Fri, 01 Jan 2044 00:00:00 GMT"))
        XCTAssertEqual(HTTPDate.parse("Friday, 01-Jan-99 00:00:00 GMT", now: in2023), HTTPDate.parse("Fri, 01 Jan 1999 00:00:00 GMT"))
    }

    /// RFC 9111 §4.2: "Although all date formats are specified to be case-sensitive, a cache
    /// recipient SHOULD match the field value case-insensitively." RFC 9110 §5.6.7: "A recipient
    /// that parses a timestamp value in an HTTP header field MUST accept all three HTTP-date
    /// formats."
    func testHTTPDateMatchesNamesWithoutCase() {
        let instant = 784_111_777.0
        for s in ["SUN, 06 NOV 1994 08:49:37 GMT", "sun, 06 nov 1994 08:49:37 gmt", "Sun, 06 nOv 1994 08:49:37 Gmt",
                  "SUNDAY, 06-NOV-94 08:49:37 GMT", "sunday, 06-nov-94 08:49:37 gmt",
                  "SUN NOV  6 08:49:37 1994", "sun nov  6 08:49:37 1994"] {
            XCTAssertEqual(HTTPDate.parse(s, now: cacheT0), instant, s)
        }
        XCTAssertEqual(HTTPDate.parse("THU, 18 AUG 2050 02:01:18 GMT"), HTTPDate.parse("Thu, 18 Aug 2050 02:01:18 GMT"))
        XCTAssertNotNil(HTTPDate.parse("Thu, 18 Aug 2050 02:01:18 GMT"))
        // Case is the only leniency: the names must still be names.
        XCTAssertNil(HTTPDate.parse("SUNX, 06 NOV 1994 08:49:37 GMT"))
        XCTAssertNil(HTTPDate.parse("Sun, 06 NOVEMBER 1994 08:49:37 GMT"))
        XCTAssertNil(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 UTC"))
    }

    /// The same leniency where the cache reads dates: `Expires`, `Date` and `Last-Modified` in
    /// any letter case and in the obsolete forms give the lifetime they name (RFC 9111 §4.2,
    /// §4.2.1, §4.2.2); an `Expires` that is no date at all still means "already expired"
    /// (RFC 9111 §5.3: "A cache recipient MUST interpret invalid date formats, especially the
    /// value "0", as representing a time in the past").
    func testCacheReadsDatesInAnyCaseAndForm() {
        let t = 2_544_400_878.0   // Thu, 18 Aug 2050 02:01:18 GMT
        let date = t - 3600
        func lifetime(_ h: [(String, String)]) -> Double {
            CacheRules.freshnessLifetime(status: 200, headers: HTTPHeaders(h), responseTime: date).lifetime
        }
        XCTAssertEqual(lifetime([("Date", "Thu, 18 Aug 2050 01:01:18 GMT"), ("Expires", "THU, 18 AUG 2050 02:01:18 GMT")]), 3600)
        XCTAssertEqual(lifetime([("Date", "THURSDAY, 18-AUG-50 01:01:18 GMT"), ("Expires", "thu aug 18 02:01:18 2050")]), 3600)
        XCTAssertEqual(lifetime([("Date", "thu, 18 aug 2050 01:01:18 gmt"), ("Expires", "Thursday, 18-Aug-50 02:01:18 GMT")]), 3600)
        for invalid in ["0", "-1", "never", "Thu, 18 Aug 2050 02:01:18", "Thu, 32 Aug 2050 02:01:18 GMT"] {
            XCTAssertEqual(lifetime([("Date", "Thu, 18 Aug 2050 01:01:18 GMT"), ("Expires", invalid)]), 0, invalid)
        }
        // Last-Modified in capitals still gives heuristic freshness (10% of Date - Last-Modified).
        let h = lifetime([("Date", "THU, 18 AUG 2050 01:01:18 GMT"), ("Last-Modified", "THU, 18 AUG 2050 00:01:18 GMT")])
        XCTAssertEqual(h, 360)
    }

    func testHTTPDateRejectsEverythingElse() {
        let invalid = [
            "", "0", "-1", "tomorrow", "1700000000",
            "Sun, 06 Nov 1994 08:49:37 UTC",        // zone must be GMT
            "Sun, 06 Nov 1994 08:49:37",            // no zone
            "Sun, 6 Nov 1994 08:49:37 GMT",         // day must be two digits
            "Sun, 06 Nov 94 08:49:37 GMT",          // IMF-fixdate has four-digit years
            "Sun, 31 Feb 1994 08:49:37 GMT",        // no such day
            "Sun, 29 Feb 2023 08:49:37 GMT",        // not a leap year
            "Sun, 00 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 06 Nov 1994 08:49:61 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT junk",
            "Funday, 06-Nov-94 08:49:37 GMT",
            "Sun, 06-Nov-94 08:49:37 GMT",          // RFC 850 wants the long day name
            "Sunday, 06 Nov 1994 08:49:37 GMT",     // IMF-fixdate wants the short one
            "Sun Nov 6 08:49:37 1994",              // asctime pads the day with a space
            "Sun Nov  6 08:49:37 94",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 8:49:37 GMT",
            "Sun, 06 Nov 0000 08:49:37 GMT",
            "Sun,\u{00A0}06 Nov 1994 08:49:37 GMT",
        ]
        for s in invalid { XCTAssertNil(HTTPDate.parse(s, now: cacheT0), s) }
    }

    func testHTTPDateFormatsIMFFixdate() {
        XCTAssertEqual(HTTPDate.format(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(HTTPDate.format(0), "Thu, 01 Jan 1970 00:00:00 GMT")
        XCTAssertEqual(HTTPDate.format(-1), "Wed, 31 Dec 1969 23:59:59 GMT")
        XCTAssertEqual(HTTPDate.format(cacheT0), "Tue, 14 Nov 2023 22:13:20 GMT")
        XCTAssertEqual(HTTPDate.format(1_709_208_000.9), "Thu, 29 Feb 2024 12:00:00 GMT")
        XCTAssertEqual(HTTPDate.format(Double.greatestFiniteMagnitude), "Fri, 31 Dec 9999 23:59:59 GMT")
        XCTAssertEqual(HTTPDate.format(-Double.greatestFiniteMagnitude), "Mon, 01 Jan 0001 00:00:00 GMT")
        // Round trips across years, leap days and the epoch's edges.
        var t = -2_000_000_000.0
        while t < 5_000_000_000 {
            XCTAssertEqual(HTTPDate.parse(HTTPDate.format(t)), t, HTTPDate.format(t))
            t += 7_777_777
        }
    }

    func testHTTPDateAgreesWithFoundation() {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        for t in stride(from: 0.0, to: 4_000_000_000, by: 123_456_789) {
            XCTAssertEqual(HTTPDate.format(t), f.string(from: Date(timeIntervalSince1970: t)))
        }
    }

    // MARK: keys and host rules

    func testKeysNormaliseURLs() {
        let same = [
            "https://example.com/a?b=1",
            "HTTPS://EXAMPLE.COM/a?b=1",
            "https://example.com:443/a?b=1",
            "https://example.com./a?b=1",
            "https://example.com/x/../a?b=1",
            "https://example.com/./a?b=1#fragment",
            "https://example.com/%61?b=1",
            "https://user:pw@example.com/a?b=1",
        ]
        for u in same { XCTAssertEqual(CacheKey(url: u)?.string, "GET https://example.com/a?b=1", u) }
        XCTAssertEqual(CacheKey(url: "http://example.com")?.url, "http://example.com/")
        XCTAssertEqual(CacheKey(url: "http://example.com:80/")?.url, "http://example.com/")
        XCTAssertEqual(CacheKey(url: "http://example.com:8080/")?.url, "http://example.com:8080/")
        XCTAssertEqual(CacheKey(url: "https://example.com:80/")?.url, "https://example.com:80/")
        XCTAssertEqual(CacheKey(url: "http://[::1]:8080/p")?.origin, "http://[::1]:8080")
        XCTAssertEqual(CacheKey(url: "http://[::1]/p")?.host, "[::1]")
        XCTAssertEqual(CacheKey(url: "https://e.com/a%2fb%2Fc")?.url, "https://e.com/a%2Fb%2Fc")   // reserved stays encoded
        XCTAssertNotEqual(CacheKey(url: "https://e.com/a?x=1&y=2"), CacheKey(url: "https://e.com/a?y=2&x=1"))
        XCTAssertEqual(CacheKey(url: "https://u:p@e.com/")?.userinfo, "u:p")
        for bad in ["ftp://example.com/", "/relative", "https:///nohost", "https://example.com:abc/", "mailto:x@y"] {
            XCTAssertNil(CacheKey(url: bad), bad)
        }
    }

    func testHostRulePatterns() {
        struct Case { let pattern: String; let host: String; let matches: Bool }
        let cases = [
            Case(pattern: "*.cdn.example.com", host: "img.cdn.example.com", matches: true),
            Case(pattern: "*.cdn.example.com", host: "a.b.cdn.example.com", matches: true),
            Case(pattern: "*.cdn.example.com", host: "cdn.example.com", matches: false),
            Case(pattern: "*.cdn.example.com", host: "xcdn.example.com", matches: false),
            Case(pattern: "*.CDN.Example.com", host: "img.cdn.example.com", matches: true),
            Case(pattern: "cdn.example.com", host: "cdn.example.com", matches: true),
            Case(pattern: "cdn.example.com.", host: "cdn.example.com", matches: true),
            Case(pattern: "cdn.example.com", host: "img.cdn.example.com", matches: false),
            Case(pattern: "*", host: "anything.test", matches: true),
        ]
        for c in cases {
            XCTAssertEqual(CacheHostRule(host: c.pattern, ttl: 1)?.matches(c.host), c.matches, "\(c.pattern) vs \(c.host)")
        }
        for bad in ["", "  ", "*.", "a.*.com", "**.x", "x/y"] { XCTAssertNil(CacheHostRule(host: bad, ttl: 1), bad) }
        XCTAssertNil(CacheHostRule(host: "x.com", ttl: -1))
        XCTAssertNil(CacheHostRule(host: "x.com", ttl: .nan))
    }

    // MARK: digests

    func testChecksumsAndDigestsMatchTheirStandards() {
        XCTAssertEqual(CacheCRC32.checksum(Array("123456789".utf8)), 0xCBF4_3926)
        XCTAssertEqual(CacheCRC32.checksum([]), 0)
        // Chunked updates equal one pass, for every split of a buffer longer than 8 bytes.
        let data = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let whole = CacheCRC32.checksum(data)
        for split in 0...data.count {
            let a = data[..<split].withUnsafeBytes { CacheCRC32.update(0, $0) }
            XCTAssertEqual(data[split...].withUnsafeBytes { CacheCRC32.update(a, $0) }, whole)
        }
        XCTAssertEqual(CacheSHA256.hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(CacheSHA256.hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(CacheSHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(CacheSHA256.hex(String(repeating: "a", count: 1000)).count, 64)
        XCTAssertEqual(CacheSHA256.hex("abc", bytes: 8), "ba7816bf8f01cfea")
    }
}

extension CacheValuesTests {
    func testDefaultDirectoryFollowsXDG() {
        let savedXDG = getenv("XDG_CACHE_HOME").map { String(cString: $0) }
        let savedHome = getenv("HOME").map { String(cString: $0) }
        defer {
            if let savedXDG { setenv("XDG_CACHE_HOME", savedXDG, 1) } else { unsetenv("XDG_CACHE_HOME") }
            if let savedHome { setenv("HOME", savedHome, 1) } else { unsetenv("HOME") }
        }
        setenv("HOME", "/home/someone", 1)
        setenv("XDG_CACHE_HOME", "/var/cache/someone", 1)
        XCTAssertEqual(HTTPCache.defaultDirectory(), "/var/cache/someone/lunet/http")
        setenv("XDG_CACHE_HOME", "relative/ignored", 1)                  // the XDG spec: relative paths are invalid
        XCTAssertEqual(HTTPCache.defaultDirectory(), "/home/someone/.cache/lunet/http")
        unsetenv("XDG_CACHE_HOME")
        XCTAssertEqual(HTTPCache.defaultDirectory(), "/home/someone/.cache/lunet/http")
        XCTAssertEqual(HTTPCache.expandingTilde("~/.cache/lunet/http"), "/home/someone/.cache/lunet/http")
        XCTAssertEqual(HTTPCache.expandingTilde("~"), "/home/someone")
        XCTAssertEqual(HTTPCache.expandingTilde("/abs/~/x"), "/abs/~/x")
        XCTAssertEqual(HTTPCache.expandingTilde("~other/x"), "~other/x")
    }
}
