import XCTest
import CLunetCurl
@testable import LunetCore

/// RFC 9111's rules as pure functions, table by table.
final class CacheRulesTests: XCTestCase {
    let date = HTTPDate.format(cacheT0)
    func at(_ offset: Double) -> String { HTTPDate.format(cacheT0 + offset) }

    // MARK: storability (§3)

    func testStorabilityTable() {
        struct Case { let method: String; let request: [(String, String)]; let status: Int; let response: [(String, String)]; let storable: Bool; let line: UInt }
        let day = 86400.0
        let cases: [Case] = [
            Case(method: "GET", request: [], status: 200, response: [], storable: true, line: #line),              // heuristically cacheable
            Case(method: "get", request: [], status: 200, response: [], storable: true, line: #line),
            Case(method: "HEAD", request: [], status: 200, response: [("Cache-Control", "max-age=60")], storable: false, line: #line),
            Case(method: "POST", request: [], status: 200, response: [("Cache-Control", "max-age=60")], storable: false, line: #line),
            Case(method: "GET", request: [], status: 100, response: [], storable: false, line: #line),             // not final
            Case(method: "GET", request: [], status: 206, response: [("Cache-Control", "max-age=60")], storable: true, line: #line),    // a piece (§3.3)
            Case(method: "GET", request: [], status: 304, response: [], storable: false, line: #line),
            Case(method: "GET", request: [], status: 404, response: [], storable: true, line: #line),              // heuristic status
            Case(method: "GET", request: [], status: 410, response: [], storable: true, line: #line),
            Case(method: "GET", request: [], status: 301, response: [], storable: true, line: #line),
            Case(method: "GET", request: [], status: 302, response: [], storable: false, line: #line),             // needs explicit freshness
            Case(method: "GET", request: [], status: 302, response: [("Cache-Control", "max-age=60")], storable: true, line: #line),
            Case(method: "GET", request: [], status: 500, response: [], storable: false, line: #line),
            Case(method: "GET", request: [], status: 500, response: [("Expires", at(day))], storable: true, line: #line),
            Case(method: "GET", request: [], status: 503, response: [("Cache-Control", "public")], storable: true, line: #line),
            Case(method: "GET", request: [], status: 201, response: [("Cache-Control", "private")], storable: true, line: #line),  // private: fine for us
            Case(method: "GET", request: [], status: 500, response: [("Cache-Control", "s-maxage=60")], storable: false, line: #line), // s-maxage: shared only
            Case(method: "GET", request: [], status: 200, response: [("Cache-Control", "no-store")], storable: false, line: #line),
            Case(method: "GET", request: [], status: 200, response: [("Cache-Control", "max-age=60, NO-STORE")], storable: false, line: #line),
            Case(method: "GET", request: [("Cache-Control", "no-store")], status: 200, response: [("Cache-Control", "max-age=60")], storable: false, line: #line),
            Case(method: "GET", request: [], status: 200, response: [("Cache-Control", "no-cache")], storable: true, line: #line),  // stored, validated on use
            Case(method: "GET", request: [], status: 200, response: [("Cache-Control", "must-understand, no-store")], storable: true, line: #line),  // §5.2.2.3
            Case(method: "GET", request: [], status: 299, response: [("Cache-Control", "must-understand, max-age=60")], storable: false, line: #line),
            Case(method: "GET", request: [("Authorization", "Bearer x")], status: 200, response: [], storable: true, line: #line),  // §3.5 binds shared caches
            Case(method: "GET", request: [], status: 200, response: [("Vary", "*")], storable: false, line: #line),
            Case(method: "GET", request: [], status: 200, response: [("Vary", "Accept, *")], storable: false, line: #line),
            Case(method: "GET", request: [], status: 200, response: [("Vary", "Accept")], storable: true, line: #line),
        ]
        for c in cases {
            let result = CacheRules.storability(method: c.method, requestHeaders: HTTPHeaders(c.request), status: c.status,
                                                responseHeaders: HTTPHeaders(c.response))
            XCTAssertEqual(result == .storable, c.storable, "\(c.method) \(c.status) \(c.response): \(result)", line: c.line)
        }
    }

    /// RFC 9111 §3.1: "Caches MUST include all received response header fields — including
    /// unrecognized ones — when storing a response", except the Connection field and the fields
    /// it names (removed before forwarding, "MAY be implemented by doing so before storage") and
    /// the proxy's own fields, which "MUST NOT be stored ... Effectively, this is limited to
    /// Proxy-Authenticate, Proxy-Authentication-Info, and Proxy-Authorization". `Set-Cookie` is
    /// not excepted, so it is stored and a hit returns it.
    /// RFC 9110 §8.4.1: content codings are named by case-insensitive tokens; RFC 9112 §6.1: a
    /// transfer coding is a property of the message. lunet removes the codings whose libraries
    /// open (ContentDecoder); anything else is handed through (see Transfer).
    func testContentCodingsLunetCannotRemoveAreRecognised() {
        XCTAssertEqual(ContentCodings.decodable, ["deflate", "gzip", "br", "zstd"], "zlib, brotli and zstd are where libcurl is")
        let known: Set<String> = ["identity", "chunked", "gzip", "x-gzip", "deflate", "br", "zstd"]
        for (value, unknown) in [("gzip", false), ("GZIP", false), ("gzip, br", false), (" br ,zstd", false), ("x-custom", true),
                                 ("gzip, x-custom", true), ("x-custom, gzip", true), ("compress", true), ("", false), (",", false),
                                 ("chunked", false), ("gzip;q=1", false)] {
            XCTAssertEqual(ContentCodings.namesUnknown(value, known: known), unknown, value)
        }
        // A response whose body may still carry a transfer coding is not stored: the field that
        // says so is hop-by-hop and never stored (RFC 9111 §3.1).
        let te = { (value: String) in CacheRules.storability(method: "GET", requestHeaders: HTTPHeaders(), status: 200,
                                                             responseHeaders: HTTPHeaders([("Cache-Control", "max-age=60"), ("Transfer-Encoding", value)])) }
        XCTAssertEqual(te("chunked"), .storable)
        XCTAssertEqual(te("x-custom"), .notStorable("a transfer coding other than chunked was on the body"))
        XCTAssertEqual(te("gzip, chunked"), .notStorable("a transfer coding other than chunked was on the body"))
    }

    func testStoredHeadersDropHopByHopAndProxyFieldsButKeepSetCookie() {
        let stored = CacheRules.storedHeaders(HTTPHeaders([
            ("Content-Type", "text/plain"), ("Connection", "keep-alive, X-Hop"), ("Keep-Alive", "timeout=5"), ("X-Hop", "1"),
            ("Transfer-Encoding", "chunked"), ("Set-Cookie", "s=1"), ("Proxy-Authenticate", "Basic"), ("ETag", "\"a\""),
            ("Set-Cookie", "t=2; Path=/"),
        ]))
        XCTAssertEqual(stored.fields.map(\.name), ["Content-Type", "Set-Cookie", "ETag", "Set-Cookie"])
        XCTAssertEqual(stored.all("Set-Cookie"), ["s=1", "t=2; Path=/"])
    }

    // MARK: freshness lifetime (§4.2.1, §4.2.2)

    func testFreshnessLifetimeTable() {
        struct Case { let status: Int; let headers: [(String, String)]; let lifetime: Double; let heuristic: Bool; let line: UInt }
        let day = 86400.0
        let cases: [Case] = [
            Case(status: 200, headers: [("Cache-Control", "max-age=60")], lifetime: 60, heuristic: false, line: #line),
            Case(status: 200, headers: [("Cache-Control", "max-age=60"), ("Expires", at(3600))], lifetime: 60, heuristic: false, line: #line),
            Case(status: 200, headers: [("Cache-Control", "s-maxage=600")], lifetime: 0, heuristic: false, line: #line),   // ignored
            Case(status: 200, headers: [("Cache-Control", "s-maxage=600, max-age=5")], lifetime: 5, heuristic: false, line: #line),
            Case(status: 200, headers: [("Expires", at(3600))], lifetime: 3600, heuristic: false, line: #line),
            Case(status: 200, headers: [("Expires", at(-3600))], lifetime: 0, heuristic: false, line: #line),
            Case(status: 200, headers: [("Expires", "0")], lifetime: 0, heuristic: false, line: #line),                   // §5.3: invalid is past
            Case(status: 200, headers: [("Expires", "tomorrow"), ("Last-Modified", at(-10 * day))], lifetime: 0, heuristic: false, line: #line),
            Case(status: 200, headers: [("Expires", at(100)), ("Expires", at(999))], lifetime: 0, heuristic: false, line: #line),    // two that disagree: stale (§4.2.1)
            Case(status: 200, headers: [("Cache-Control", "max-age=oops"), ("Expires", at(3600))], lifetime: 0, heuristic: false, line: #line),
            Case(status: 200, headers: [("Last-Modified", at(-5 * day))], lifetime: 0.5 * day, heuristic: true, line: #line),  // 10%
            Case(status: 200, headers: [("Last-Modified", at(-100 * day))], lifetime: day, heuristic: true, line: #line),     // capped
            Case(status: 200, headers: [("Last-Modified", at(60))], lifetime: 0, heuristic: false, line: #line),              // in the future
            Case(status: 200, headers: [("Last-Modified", "garbage")], lifetime: 0, heuristic: false, line: #line),
            Case(status: 200, headers: [], lifetime: 0, heuristic: false, line: #line),
            Case(status: 404, headers: [("Last-Modified", at(-1000))], lifetime: 100, heuristic: true, line: #line),
            Case(status: 500, headers: [("Last-Modified", at(-1000))], lifetime: 0, heuristic: false, line: #line),           // not heuristic
            Case(status: 500, headers: [("Last-Modified", at(-1000)), ("Cache-Control", "public")], lifetime: 100, heuristic: true, line: #line),
        ]
        for c in cases {
            var h = HTTPHeaders(c.headers)
            h.add("Date", date)
            let (lifetime, heuristic) = CacheRules.freshnessLifetime(status: c.status, headers: h, responseTime: cacheT0)
            XCTAssertEqual(lifetime, c.lifetime, accuracy: 0.001, "\(c.status) \(c.headers)", line: c.line)
            XCTAssertEqual(heuristic, c.heuristic, "\(c.status) \(c.headers)", line: c.line)
        }
    }

    func testExpiresWithoutDateCountsFromTheResponseTime() {
        let h = HTTPHeaders([("Expires", at(3600))])
        XCTAssertEqual(CacheRules.freshnessLifetime(status: 200, headers: h, responseTime: cacheT0 + 600).lifetime, 3000)
        XCTAssertEqual(CacheRules.freshnessLifetime(status: 200, headers: HTTPHeaders([("Date", "nonsense"), ("Expires", at(3600))]),
                                                    responseTime: cacheT0).lifetime, 3600)
    }

    // MARK: age (§4.2.3)

    func testCurrentAgeTable() {
        struct Case { let headers: [(String, String)]; let request: Double; let response: Double; let now: Double; let age: Double; let line: UInt }
        let cases: [Case] = [
            // Date = response time, no Age, instant transfer: age is the time since.
            Case(headers: [("Date", at(0))], request: 0, response: 0, now: 100, age: 100, line: #line),
            // Age counts, plus the response delay (corrected_age_value = age_value + response_delay).
            Case(headers: [("Date", at(0)), ("Age", "60")], request: -2, response: 0, now: 0, age: 62, line: #line),
            Case(headers: [("Date", at(0)), ("Age", "60")], request: -2, response: 0, now: 10, age: 72, line: #line),
            // apparent_age = response_time - date_value, when greater.
            Case(headers: [("Date", at(-100)), ("Age", "10")], request: 0, response: 0, now: 0, age: 100, line: #line),
            // A Date in the future gives no negative age.
            Case(headers: [("Date", at(500))], request: 0, response: 0, now: 0, age: 0, line: #line),
            // No Date: date_value is the response time.
            Case(headers: [], request: -1, response: 0, now: 5, age: 6, line: #line),
            Case(headers: [("Date", at(0)), ("Age", " 7 ")], request: 0, response: 0, now: 0, age: 7, line: #line),
            // A clock that went backwards makes no negative resident time.
            Case(headers: [("Date", at(0))], request: 0, response: 0, now: -50, age: 0, line: #line),
        ]
        for c in cases {
            let age = CacheRules.currentAge(headers: HTTPHeaders(c.headers), requestTime: cacheT0 + c.request,
                                            responseTime: cacheT0 + c.response, now: cacheT0 + c.now)
            XCTAssertEqual(age, c.age, accuracy: 0.001, "\(c.headers)", line: c.line)
        }
    }

    /// RFC 9111 §5.1: "a cache encountering a message with a list-based Age field value SHOULD
    /// use the first member of the field value, discarding subsequent ones. If the field value
    /// (after discarding additional members, as per above) is invalid (e.g., it contains
    /// something other than a non-negative integer), a cache SHOULD ignore the field."
    /// lunet ignores it (age_value 0), as browsers do; the apparent age from Date still counts,
    /// so an old response never looks fresh.
    func testAgeTakesTheFirstMemberAndAnInvalidAgeIsIgnored() {
        let greatest = Double(CacheControl.greatestDelta)
        let cases: [([(String, String)], Double, UInt)] = [
            ([], 0, #line),                                            // absent: 0 (§4.2.3)
            ([("Age", "7200")], 7200, #line),
            ([("Age", "7200, 0")], 7200, #line),                       // a list: the first member
            ([("Age", "7200,0")], 7200, #line),
            ([("Age", " , 30, 5")], 30, #line),                        // empty members do not count (RFC 9110 §5.6.1)
            ([("Age", "30"), ("Age", "0")], 30, #line),                // two field lines are one list
            ([("Age", "99999999999")], greatest, #line),               // saturates at 2^31 (§1.2.2)
            ([("Age", "100s")], 0, #line),                             // a suffix: invalid, ignored (§5.1)
            ([("Age", "100;q=1")], 0, #line),                          // a parameter: invalid, ignored
            ([("Age", "1.5")], 0, #line),
            ([("Age", "-1")], 0, #line),
            ([("Age", "-5")], 0, #line),
            ([("Age", "abc")], 0, #line),
            ([("Age", "\"10\"")], 0, #line),
            ([("Age", "")], 0, #line),                                 // present but empty: as absent
            ([("Age", "bad, 10")], 0, #line),                          // the first member decides: ignored
        ]
        for (headers, expected, line) in cases {
            XCTAssertEqual(CacheRules.ageValue(HTTPHeaders(headers)), expected, "\(headers)", line: line)
        }
        // The example: a response one hour past its two-hour lifetime, with a list Age.
        let h = HTTPHeaders([("Date", at(0)), ("Cache-Control", "max-age=3600"), ("Age", "7200, 0")])
        let age = CacheRules.currentAge(headers: h, requestTime: cacheT0, responseTime: cacheT0, now: cacheT0)
        XCTAssertEqual(age, 7200)
        XCTAssertFalse(CacheRules.usableWithoutValidation(response: CacheControl(h), request: CacheControl(),
                                                          lifetime: 3600, age: age), "stale, so validated")
        // An invalid Age is ignored (§5.1): a fresh response stays usable, as in browsers...
        for bad in ["abc", "-1", "1.5"] {
            let invalid = HTTPHeaders([("Date", at(0)), ("Cache-Control", "max-age=3600"), ("Age", bad)])
            let a = CacheRules.currentAge(headers: invalid, requestTime: cacheT0, responseTime: cacheT0, now: cacheT0 + 10)
            XCTAssertEqual(a, 10, "Age: \(bad)")
            XCTAssertTrue(CacheRules.usableWithoutValidation(response: CacheControl(invalid), request: CacheControl(),
                                                             lifetime: 3600, age: a), "Age: \(bad): fresh, usable")
        }
        // ...and never makes an old one look fresh: the Date still ages it.
        let old = HTTPHeaders([("Date", at(-7200)), ("Cache-Control", "max-age=3600"), ("Age", "abc")])
        XCTAssertEqual(CacheRules.currentAge(headers: old, requestTime: cacheT0, responseTime: cacheT0, now: cacheT0), 7200,
                       "the apparent age from Date")
    }

    // MARK: using a stored response (§4, §4.2.4, §5.2.1)

    func testUsableWithoutValidationTable() {
        struct Case { let response: String; let request: String; let lifetime: Double; let age: Double; let rule: Bool; let usable: Bool; let line: UInt }
        let cases: [Case] = [
            Case(response: "max-age=100", request: "", lifetime: 100, age: 50, rule: false, usable: true, line: #line),
            Case(response: "max-age=100", request: "", lifetime: 100, age: 100, rule: false, usable: false, line: #line),   // fresh is lifetime > age
            Case(response: "max-age=100", request: "", lifetime: 100, age: 150, rule: false, usable: false, line: #line),
            Case(response: "no-cache, max-age=100", request: "", lifetime: 100, age: 1, rule: false, usable: false, line: #line),
            Case(response: "max-age=100", request: "no-cache", lifetime: 100, age: 1, rule: false, usable: false, line: #line),
            Case(response: "max-age=100", request: "max-age=30", lifetime: 100, age: 50, rule: false, usable: false, line: #line),
            Case(response: "max-age=100", request: "max-age=60", lifetime: 100, age: 50, rule: false, usable: true, line: #line),
            Case(response: "max-age=100", request: "max-age=0", lifetime: 100, age: 0, rule: false, usable: true, line: #line),
            Case(response: "max-age=100", request: "min-fresh=60", lifetime: 100, age: 50, rule: false, usable: false, line: #line),
            Case(response: "max-age=100", request: "min-fresh=40", lifetime: 100, age: 50, rule: false, usable: true, line: #line),
            Case(response: "max-age=100", request: "max-stale=60", lifetime: 100, age: 150, rule: false, usable: true, line: #line),
            Case(response: "max-age=100", request: "max-stale=40", lifetime: 100, age: 150, rule: false, usable: false, line: #line),
            Case(response: "max-age=100", request: "max-stale", lifetime: 100, age: 1e9, rule: false, usable: true, line: #line),
            Case(response: "max-age=100, must-revalidate", request: "max-stale", lifetime: 100, age: 150, rule: false, usable: false, line: #line),
            Case(response: "max-age=100, must-revalidate", request: "", lifetime: 100, age: 50, rule: false, usable: true, line: #line),
            Case(response: "no-cache", request: "max-stale", lifetime: 0, age: 5, rule: false, usable: false, line: #line),
            Case(response: "max-age=100", request: "max-stale=100, max-age=120", lifetime: 100, age: 150, rule: false, usable: false, line: #line),
            // Host rules: the response's own directives do not count, the request's do.
            Case(response: "no-cache, must-revalidate", request: "", lifetime: 100, age: 50, rule: true, usable: true, line: #line),
            Case(response: "no-store", request: "no-cache", lifetime: 100, age: 50, rule: true, usable: false, line: #line),
        ]
        for c in cases {
            let usable = CacheRules.usableWithoutValidation(response: CacheControl(parsing: c.response), request: CacheControl(parsing: c.request),
                                                            lifetime: c.lifetime, age: c.age, hostRule: c.rule)
            XCTAssertEqual(usable, c.usable, "response \(c.response), request \(c.request), lifetime \(c.lifetime), age \(c.age)", line: c.line)
        }
    }

    /// RFC 5861 §3: stale-while-revalidate "indicates that caches MAY serve the response in which
    /// it appears after it becomes stale, up to the indicated number of seconds". §4:
    /// stale-if-error "indicates that when an error is encountered, a cached stale response MAY
    /// be used to satisfy the request, regardless of other freshness information", within its
    /// limit; the request may carry it too. Neither overrides must-revalidate or no-cache
    /// (RFC 9111 §4.2.4: "A cache MUST NOT generate a stale response if it is prohibited by an
    /// explicit in-protocol directive").
    func testStaleWhileRevalidateAndStaleIfErrorWindows() {
        struct Case { let response: String; let request: String; let age: Double; let swr: Bool; let sie: Bool; let line: UInt }
        // lifetime 60 in every case; staleness = age - 60
        let cases: [Case] = [
            Case(response: "max-age=60, stale-while-revalidate=30", request: "", age: 70, swr: true, sie: false, line: #line),
            Case(response: "max-age=60, stale-while-revalidate=30", request: "", age: 90, swr: true, sie: false, line: #line),   // the edge
            Case(response: "max-age=60, stale-while-revalidate=30", request: "", age: 91, swr: false, sie: false, line: #line),
            Case(response: "max-age=60, stale-while-revalidate=30", request: "", age: 50, swr: false, sie: false, line: #line),  // fresh: not this
            Case(response: "max-age=60, stale-while-revalidate=30, must-revalidate", request: "", age: 70, swr: false, sie: false, line: #line),
            Case(response: "max-age=60, stale-while-revalidate=30, no-cache", request: "", age: 70, swr: false, sie: false, line: #line),
            Case(response: "max-age=60, stale-while-revalidate=30", request: "no-cache", age: 70, swr: false, sie: false, line: #line),
            Case(response: "max-age=60, stale-while-revalidate=30", request: "min-fresh=1", age: 70, swr: false, sie: false, line: #line),
            Case(response: "max-age=60, stale-while-revalidate=30", request: "max-age=65", age: 70, swr: false, sie: false, line: #line),
            Case(response: "max-age=60, stale-while-revalidate=30", request: "max-age=80", age: 70, swr: true, sie: false, line: #line),
            Case(response: "max-age=60, stale-if-error=30", request: "", age: 90, swr: false, sie: true, line: #line),
            Case(response: "max-age=60, stale-if-error=30", request: "", age: 91, swr: false, sie: false, line: #line),
            Case(response: "max-age=60, stale-if-error=30", request: "stale-if-error=100", age: 150, swr: false, sie: true, line: #line),
            Case(response: "max-age=60, stale-if-error=300", request: "stale-if-error=10", age: 150, swr: false, sie: false, line: #line),  // the client's limit
            Case(response: "max-age=60", request: "stale-if-error=100", age: 150, swr: false, sie: true, line: #line),
            Case(response: "max-age=60, stale-if-error=30, must-revalidate", request: "", age: 70, swr: false, sie: false, line: #line),
            Case(response: "max-age=60, stale-if-error=30, no-cache", request: "stale-if-error=30", age: 70, swr: false, sie: false, line: #line),
            Case(response: "max-age=60, stale-while-revalidate=1.5, stale-if-error=x", request: "", age: 61, swr: false, sie: false, line: #line),
        ]
        for c in cases {
            let cc = CacheControl(parsing: c.response), q = CacheControl(parsing: c.request)
            XCTAssertEqual(CacheRules.mayServeWhileRevalidating(response: cc, request: q, lifetime: 60, age: c.age), c.swr, "swr", line: c.line)
            XCTAssertEqual(CacheRules.mayServeInsteadOfError(response: cc, request: q, lifetime: 60, age: c.age), c.sie, "sie", line: c.line)
        }
        // What counts as an error: those statuses, and a connection that ended below HTTP.
        XCTAssertEqual(CacheRules.staleIfErrorStatuses, [500, 502, 503, 504])
        XCTAssertTrue(CurlErrorMapping.losesTheConnection(CURLE_GOT_NOTHING))      // an empty reply
        XCTAssertTrue(CurlErrorMapping.losesTheConnection(CURLE_RECV_ERROR))       // a reset
        XCTAssertTrue(CurlErrorMapping.losesTheConnection(CURLE_PARTIAL_FILE))     // closed inside the body
        XCTAssertFalse(CurlErrorMapping.losesTheConnection(CURLE_WEIRD_SERVER_REPLY))
        XCTAssertFalse(CurlErrorMapping.losesTheConnection(CURLE_BAD_CONTENT_ENCODING))
    }

    func testStaleMayBeServedWhenDisconnectedUnlessForbidden() {
        XCTAssertTrue(CacheRules.mayServeStale(CacheControl(parsing: "max-age=10")))
        XCTAssertFalse(CacheRules.mayServeStale(CacheControl(parsing: "max-age=10, must-revalidate")))
        XCTAssertFalse(CacheRules.mayServeStale(CacheControl(parsing: "no-cache")))
        XCTAssertTrue(CacheRules.mayServeStale(CacheControl(parsing: "no-cache"), hostRule: true))
    }

    // MARK: validation (§4.3)

    func testConditionalHeaders() {
        func fields(_ h: [(String, String)]) -> [String] { CacheRules.conditionalHeaders(for: HTTPHeaders(h)).map { "\($0.0): \($0.1)" } }
        XCTAssertEqual(fields([("ETag", "\"v1\"")]), ["If-None-Match: \"v1\""])
        XCTAssertEqual(fields([("ETag", "W/\"v1\"")]), ["If-None-Match: W/\"v1\""])
        XCTAssertEqual(fields([("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]), ["If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT"])
        XCTAssertEqual(fields([("ETag", "\"v1\""), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]),
                       ["If-None-Match: \"v1\"", "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT"])
        XCTAssertEqual(fields([("Last-Modified", "yesterday")]), [])
        XCTAssertEqual(fields([]), [])
    }

    /// RFC 9111 §4.3.4: "If the new response contains a strong validator (see Section 8.8.1 of
    /// [HTTP]), then that strong validator identifies the selected representation for update.
    /// All the stored responses with the same strong validator are identified for update. If the
    /// new response contains no strong validator but does contain one or more weak validators,
    /// and those validators correspond to one of the cache's stored responses, then the most
    /// recent of those matching stored responses is identified for update." A 304 that
    /// identifies no stored response updates nothing.
    func testNotModifiedSelectsTheStoredResponse() {
        struct Case { let stored: [(String, String)]; let notModified: [(String, String)]; let selects: Bool; let line: UInt }
        let lm = "Sun, 06 Nov 1994 08:49:37 GMT"
        let cases: [Case] = [
            Case(stored: [("ETag", "\"a\"")], notModified: [("ETag", "\"a\"")], selects: true, line: #line),
            Case(stored: [("ETag", "\"a\"")], notModified: [("ETag", "\"b\"")], selects: false, line: #line),
            Case(stored: [("ETag", "W/\"a\"")], notModified: [("ETag", "\"a\"")], selects: false, line: #line),  // strong: strong comparison
            Case(stored: [("ETag", "W/\"a\"")], notModified: [("ETag", "W/\"a\"")], selects: true, line: #line),
            Case(stored: [("ETag", "W/\"a\"")], notModified: [("ETag", "W/\"b\"")], selects: false, line: #line),
            Case(stored: [("Last-Modified", lm)], notModified: [("ETag", "\"a\"")], selects: false, line: #line),
            Case(stored: [("ETag", "\"a\""), ("Last-Modified", lm)], notModified: [("Last-Modified", "Mon, 07 Nov 1994 08:49:37 GMT")], selects: false, line: #line),
            Case(stored: [("ETag", "\"a\"")], notModified: [("Last-Modified", lm)], selects: false, line: #line),
            Case(stored: [("Last-Modified", lm)], notModified: [("Last-Modified", "SUN, 06 NOV 1994 08:49:37 GMT")], selects: true, line: #line),
            Case(stored: [("ETag", "\"a\"")], notModified: [("ETag", "W/\"a\"")], selects: true, line: #line),
            Case(stored: [], notModified: [("ETag", "\"a\"")], selects: false, line: #line),
            Case(stored: [("ETag", "\"a\"")], notModified: [], selects: true, line: #line),     // a 304 without validators
            Case(stored: [("Last-Modified", lm)], notModified: [("Last-Modified", lm)], selects: true, line: #line),
            Case(stored: [("Last-Modified", lm)], notModified: [("Last-Modified", "Mon, 07 Nov 1994 08:49:37 GMT")], selects: false, line: #line),
        ]
        for c in cases {
            XCTAssertEqual(CacheRules.notModifiedSelects(stored: HTTPHeaders(c.stored), notModified: HTTPHeaders(c.notModified)), c.selects, line: c.line)
        }
    }

    /// RFC 9111 §4.3.5: "For each of the stored responses that could have been chosen, if the
    /// stored response and HEAD response have matching values for any received validator fields
    /// (ETag and Last-Modified) and, if the HEAD response has a Content-Length header field, the
    /// value of Content-Length matches that of the stored response, the cache SHOULD update the
    /// stored response as described below; otherwise, the cache SHOULD consider the stored
    /// response to be stale."
    func testAHeadResponseDescribesTheStoredResponseOnlyWhenItsValidatorsAndLengthMatch() {
        struct Case { let stored: [(String, String)]; let body: Int; let head: [(String, String)]; let matches: Bool; let line: UInt }
        let lm = "Sun, 06 Nov 1994 08:49:37 GMT"
        let cases: [Case] = [
            Case(stored: [("ETag", "\"a\""), ("Content-Length", "5")], body: 5, head: [("ETag", "\"a\""), ("Content-Length", "5")], matches: true, line: #line),
            Case(stored: [("ETag", "\"a\"")], body: 5, head: [("ETag", "\"b\"")], matches: false, line: #line),
            Case(stored: [("ETag", "\"a\"")], body: 5, head: [("ETag", "W/\"a\"")], matches: false, line: #line),
            Case(stored: [], body: 5, head: [("ETag", "\"a\"")], matches: false, line: #line),
            Case(stored: [("ETag", "\"a\"")], body: 5, head: [], matches: true, line: #line),                  // nothing received to differ
            Case(stored: [("Last-Modified", lm)], body: 5, head: [("Last-Modified", lm)], matches: true, line: #line),
            Case(stored: [("Last-Modified", lm)], body: 5, head: [("Last-Modified", "Mon, 07 Nov 1994 08:49:37 GMT")], matches: false, line: #line),
            Case(stored: [("ETag", "\"a\""), ("Content-Length", "5")], body: 5, head: [("ETag", "\"a\""), ("Content-Length", "6")], matches: false, line: #line),
            Case(stored: [("ETag", "\"a\"")], body: 5, head: [("Content-Length", "5")], matches: true, line: #line),   // measured by the body
            Case(stored: [("ETag", "\"a\"")], body: 5, head: [("Content-Length", "9")], matches: false, line: #line),
            Case(stored: [("Content-Encoding", "gzip")], body: 50, head: [("Content-Length", "20")], matches: false, line: #line),  // decoded: unknown
            Case(stored: [("Content-Encoding", "gzip"), ("Content-Length", "20")], body: 50, head: [("Content-Length", "20")], matches: true, line: #line),
        ]
        for c in cases {
            XCTAssertEqual(CacheRules.headDescribesStored(stored: HTTPHeaders(c.stored), storedBodyCount: c.body, head: HTTPHeaders(c.head)),
                           c.matches, line: c.line)
        }
    }

    func testA304UpdatesStoredFields() {
        let stored = HTTPHeaders([("Content-Type", "text/plain"), ("Content-Length", "5"), ("ETag", "\"a\""), ("Cache-Control", "max-age=10"),
                                  ("Date", at(-100)), ("X-Old", "1"), ("Content-Encoding", "gzip")])
        let notModified = HTTPHeaders([("Cache-Control", "max-age=600"), ("Date", at(0)), ("Content-Length", "0"), ("X-New", "2"),
                                       ("Connection", "X-Hop"), ("X-Hop", "h"), ("Content-Encoding", "br"), ("Set-Cookie", "s=1"), ("ETag", "\"a\"")])
        let updated = CacheRules.updatedHeaders(stored: stored, with: notModified)
        XCTAssertEqual(updated["Cache-Control"], "max-age=600")
        XCTAssertEqual(updated["Date"], at(0))
        XCTAssertEqual(updated["Content-Length"], "5")          // the stored body's
        XCTAssertEqual(updated["Content-Encoding"], "gzip")
        XCTAssertEqual(updated["X-Old"], "1")
        XCTAssertEqual(updated["X-New"], "2")
        XCTAssertNil(updated["X-Hop"])
        XCTAssertNil(updated["Connection"])
        XCTAssertEqual(updated["Set-Cookie"], "s=1")            // stored like any field (§3.1)
        XCTAssertEqual(updated.all("Cache-Control").count, 1)
    }

    // MARK: Vary (§4.1)

    func testVaryNamesAndValues() {
        XCTAssertEqual(CacheRules.varyNames(HTTPHeaders([("Vary", "Accept-Encoding, accept-language"), ("Vary", "ACCEPT-ENCODING")])),
                       ["accept-encoding", "accept-language"])
        XCTAssertEqual(CacheRules.varyNames(HTTPHeaders()), [])
        XCTAssertNil(CacheRules.varyNames(HTTPHeaders([("Vary", "*")])))
        struct Case { let a: [(String, String)]; let b: [(String, String)]; let same: Bool; let line: UInt }
        let cases: [Case] = [
            Case(a: [("Accept-Language", "en, fr")], b: [("accept-language", "en,fr")], same: true, line: #line),
            Case(a: [("Accept-Language", "en,  fr")], b: [("Accept-Language", "en"), ("Accept-Language", "fr")], same: true, line: #line),
            Case(a: [("Accept-Language", " en ")], b: [("Accept-Language", "en")], same: true, line: #line),
            Case(a: [("Accept-Language", "en")], b: [("Accept-Language", "fr")], same: false, line: #line),
            Case(a: [("Accept-Language", "en")], b: [], same: false, line: #line),
            Case(a: [], b: [], same: true, line: #line),
            Case(a: [("Accept-Language", "")], b: [], same: false, line: #line),          // empty is not absent
            Case(a: [("X", "a  b")], b: [("X", "a b")], same: true, line: #line),
            Case(a: [("X", "\"a  b\"")], b: [("X", "\"a b\"")], same: false, line: #line), // inside quotes, spaces count
        ]
        for c in cases {
            let name = c.a.first?.0 ?? c.b.first?.0 ?? "Accept-Language"
            XCTAssertEqual(CacheRules.varyValue(name, in: HTTPHeaders(c.a)) == CacheRules.varyValue(name, in: HTTPHeaders(c.b)), c.same,
                           "\(c.a) vs \(c.b)", line: c.line)
        }
        let secret = CacheRules.varyValue("Authorization", in: HTTPHeaders([("Authorization", "Bearer s3cret")]))
        XCTAssertTrue(secret?.hasPrefix("sha256:") == true)
        XCTAssertFalse(secret?.contains("s3cret") == true)
    }

    // MARK: invalidation (§4.4)

    /// RFC 9110 §9.3.3: "Responses to POST requests are only cacheable when they include explicit
    /// freshness information (see Section 4.2.1 of [CACHING]) and a Content-Location header
    /// field that has the same value as the POST's target URI (Section 8.7). A cached POST
    /// response can be reused to satisfy a later GET or HEAD request."
    func testAPostResponseRepresentsItsTargetOnlyWithExplicitFreshnessAndItsOwnContentLocation() {
        let url = "https://example.com/items/1?x=1"
        struct Case { let status: Int; let headers: [(String, String)]; let reusable: Bool; let line: UInt }
        let cases: [Case] = [
            Case(status: 200, headers: [("Cache-Control", "max-age=60"), ("Content-Location", url)], reusable: true, line: #line),
            Case(status: 200, headers: [("Cache-Control", "max-age=60"), ("Content-Location", "/items/1?x=1")], reusable: true, line: #line),
            Case(status: 200, headers: [("Cache-Control", "max-age=60"), ("Content-Location", "HTTPS://EXAMPLE.COM:443/items/%31?x=1")], reusable: true, line: #line),
            Case(status: 200, headers: [("Expires", "Thu, 01 Dec 2050 16:00:00 GMT"), ("Content-Location", url)], reusable: true, line: #line),
            Case(status: 203, headers: [("Cache-Control", "max-age=60"), ("Content-Location", url)], reusable: true, line: #line),
            Case(status: 200, headers: [("Content-Location", url)], reusable: false, line: #line),                       // no explicit freshness
            Case(status: 200, headers: [("Cache-Control", "public"), ("Content-Location", url)], reusable: false, line: #line),
            Case(status: 200, headers: [("Cache-Control", "max-age=60")], reusable: false, line: #line),                // no Content-Location
            Case(status: 200, headers: [("Cache-Control", "max-age=60"), ("Content-Location", "/items/2")], reusable: false, line: #line),
            Case(status: 200, headers: [("Cache-Control", "max-age=60"), ("Content-Location", "/items/1?x=2")], reusable: false, line: #line),
            Case(status: 201, headers: [("Cache-Control", "max-age=60"), ("Content-Location", url)], reusable: false, line: #line),
            Case(status: 500, headers: [("Cache-Control", "max-age=60"), ("Content-Location", url)], reusable: false, line: #line),
        ]
        for c in cases {
            XCTAssertEqual(CacheRules.postResponseRepresentsTarget(requestURL: url, status: c.status, headers: HTTPHeaders(c.headers)),
                           c.reusable, line: c.line)
        }
    }

    func testInvalidationTable() {
        struct Case { let method: String; let status: Int; let headers: [(String, String)]; let urls: [String]; let line: UInt }
        let target = "https://example.com/items/1"
        let cases: [Case] = [
            Case(method: "POST", status: 200, headers: [], urls: [target], line: #line),
            Case(method: "PUT", status: 204, headers: [], urls: [target], line: #line),
            Case(method: "DELETE", status: 202, headers: [], urls: [target], line: #line),
            Case(method: "PATCH", status: 303, headers: [], urls: [target], line: #line),
            Case(method: "PURGE", status: 200, headers: [], urls: [target], line: #line),               // unknown: unsafe
            Case(method: "POST", status: 404, headers: [], urls: [], line: #line),                      // error: nothing
            Case(method: "POST", status: 500, headers: [], urls: [], line: #line),
            Case(method: "GET", status: 200, headers: [], urls: [], line: #line),
            Case(method: "HEAD", status: 200, headers: [], urls: [], line: #line),
            Case(method: "OPTIONS", status: 200, headers: [], urls: [], line: #line),
            Case(method: "POST", status: 201, headers: [("Location", "/items/2")], urls: [target, "https://example.com/items/2"], line: #line),
            Case(method: "POST", status: 201, headers: [("Location", "2"), ("Content-Location", "https://EXAMPLE.com:443/items/1/")],
                 urls: [target, "https://example.com/items/2", "https://example.com/items/1/"], line: #line),
            Case(method: "POST", status: 201, headers: [("Location", "https://other.example/items/2")], urls: [target], line: #line),  // other origin
            Case(method: "POST", status: 201, headers: [("Location", "http://example.com/items/2")], urls: [target], line: #line),     // other scheme
        ]
        for c in cases {
            XCTAssertEqual(CacheRules.invalidatedURLs(method: c.method, requestURL: target, status: c.status, responseHeaders: HTTPHeaders(c.headers)),
                           c.urls, "\(c.method) \(c.status)", line: c.line)
        }
    }
}
