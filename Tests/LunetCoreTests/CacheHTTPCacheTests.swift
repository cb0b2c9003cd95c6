import XCTest
@testable import LunetCore

/// HTTPCache's decisions, memory tier only: the calls a session makes around transfers.
final class CacheHTTPCacheTests: XCTestCase {
    func makeCache(_ configure: (inout HTTPCache.Configuration) -> Void = { _ in }) -> HTTPCache {
        var c = HTTPCache.Configuration(memoryLimit: 1 << 20, diskLimit: 0, directory: nil)
        configure(&c)
        return HTTPCache(c)
    }

    /// Stores a GET response for `url` received at `cacheT0` (sent one second before).
    @discardableResult
    func put(_ cache: HTTPCache, _ headers: [(String, String)], status: Int = 200, body: String = "hello",
             request: [(String, String)] = [], at time: Double = cacheT0) -> CacheStoreResult {
        put(cache, "https://example.com/a", headers, status: status, body: body, request: request, at: time)
    }

    @discardableResult
    func put(_ cache: HTTPCache, _ url: String, _ headers: [(String, String)], status: Int = 200,
             body: String = "hello", request: [(String, String)] = [], at time: Double = cacheT0) -> CacheStoreResult {
        let req = cacheRequest(url, request)
        return cache.store(request: req, response: cacheResponse(status, headers, body: body, request: req, date: time),
                           requestTime: time - 1, responseTime: time)
    }

    func testFreshHitServesTheStoredResponseWithAge() {
        let cache = makeCache()
        XCTAssertEqual(put(cache, [("Cache-Control", "max-age=100"), ("Content-Type", "text/plain")]), .stored)
        let request = cacheRequest("https://EXAMPLE.com:443/a#top", [("X-Trace", "2")])
        guard case .hit(let stored) = cache.lookup(request, now: cacheT0 + 30) else { return XCTFail("expected a hit") }
        XCTAssertTrue(stored.isFresh)
        XCTAssertEqual(stored.cacheStatus, "hit")
        XCTAssertEqual(stored.age, 31, accuracy: 0.001)              // one second of response delay counts (§4.2.3)
        let r = stored.response(for: request)
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.headers["Age"], "31")
        XCTAssertEqual(r.headers["Content-Type"], "text/plain")
        XCTAssertEqual(r.body.string, "hello")
        XCTAssertEqual(r.url, "https://example.com/a")
        XCTAssertEqual(r.request.headers["X-Trace"], "2")
        XCTAssertEqual(r.connectionsOpened, 0)
        XCTAssertEqual(cache.stats().hits, 1)
    }

    func testStaleResponseIsValidatedAndA304FreshensIt() {
        let cache = makeCache()
        put(cache, [("Cache-Control", "max-age=10"), ("ETag", "\"v1\""), ("Last-Modified", HTTPDate.format(cacheT0 - 3600)), ("X-Version", "1")],
            body: "body v1")
        let decision = cache.lookup(cacheRequest(), now: cacheT0 + 20)
        guard case .stale(let stored, let fields) = decision else { return XCTFail("expected stale, got \(decision.kind)") }
        XCTAssertEqual(fields.map(\.0), ["If-None-Match", "If-Modified-Since"])
        XCTAssertEqual(fields.first?.1, "\"v1\"")
        XCTAssertTrue(stored.mayServeStale)
        XCTAssertEqual(stored.response(for: cacheRequest()).headers["Age"], "21")

        // The session sends the request with those fields; the server says 304.
        var conditional = cacheRequest()
        for (n, v) in fields { conditional.headers.set(n, v) }
        let notModified = cacheResponse(304, [("Cache-Control", "max-age=100"), ("ETag", "\"v1\""), ("X-Version", "2")], body: "",
                                        request: conditional, date: cacheT0 + 20)
        guard let r = cache.revalidated(stored, with: notModified, requestTime: cacheT0 + 20, responseTime: cacheT0 + 20) else {
            return XCTFail("the 304 should select the stored response")
        }
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.body.string, "body v1")
        XCTAssertEqual(r.headers["X-Version"], "2")
        XCTAssertEqual(r.headers["Age"], "0")
        XCTAssertEqual(r.connectionsOpened, 1)
        XCTAssertEqual(cache.stats().revalidations, 1)

        // Fresh again, for the new max-age, counted from the 304.
        guard case .hit(let again) = cache.lookup(cacheRequest(), now: cacheT0 + 50) else { return XCTFail("expected a hit") }
        XCTAssertEqual(again.response(for: cacheRequest()).headers["Age"], "30")
        XCTAssertEqual(again.response(for: cacheRequest()).headers["X-Version"], "2")
        XCTAssertEqual(cache.lookup(cacheRequest(), now: cacheT0 + 121).kind, "stale")
    }

    func testA304ForAnotherRepresentationIsRefused() {
        let cache = makeCache()
        put(cache, [("Cache-Control", "max-age=0"), ("ETag", "\"v1\"")])
        guard case .stale(let stored, _) = cache.lookup(cacheRequest(), now: cacheT0 + 1) else { return XCTFail() }
        let other = cacheResponse(304, [("ETag", "\"v2\"")], body: "", date: cacheT0 + 1)
        XCTAssertNil(cache.revalidated(stored, with: other, requestTime: cacheT0 + 1, responseTime: cacheT0 + 1))
        XCTAssertNil(cache.revalidated(stored, with: cacheResponse(200, [], date: cacheT0 + 1), requestTime: cacheT0 + 1, responseTime: cacheT0 + 1))
    }

    func testA304ThatSaysNoStoreRemovesTheStoredResponse() {
        let cache = makeCache()
        put(cache, [("Cache-Control", "max-age=0"), ("ETag", "\"v1\"")])
        guard case .stale(let stored, _) = cache.lookup(cacheRequest(), now: cacheT0 + 1) else { return XCTFail() }
        let r = cache.revalidated(stored, with: cacheResponse(304, [("Cache-Control", "no-store")], body: "", date: cacheT0 + 1),
                                  requestTime: cacheT0 + 1, responseTime: cacheT0 + 1)
        XCTAssertEqual(r?.body.string, "hello")
        XCTAssertEqual(cache.lookup(cacheRequest(), now: cacheT0 + 2).kind, "miss")
    }

    func testNoCacheResponsesAreValidatedEveryTime() {
        let cache = makeCache()
        put(cache, [("Cache-Control", "no-cache, max-age=1000"), ("ETag", "\"x\"")])
        XCTAssertEqual(cache.lookup(cacheRequest(), now: cacheT0).kind, "stale")
        guard case .stale(let stored, _) = cache.lookup(cacheRequest(), now: cacheT0) else { return XCTFail() }
        XCTAssertFalse(stored.mayServeStale)
    }

    func testRequestDirectivesAndPragma() {
        let cache = makeCache()
        put(cache, [("Cache-Control", "max-age=100")])
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a", [("Cache-Control", "no-cache")]), now: cacheT0 + 1).kind, "stale")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a", [("Pragma", "no-cache")]), now: cacheT0 + 1).kind, "stale")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a", [("Cache-Control", "max-age=5")]), now: cacheT0 + 10).kind, "stale")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a", [("Cache-Control", "min-fresh=95")]), now: cacheT0 + 10).kind, "stale")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a", [("Cache-Control", "max-stale=50")]), now: cacheT0 + 130).kind, "hit-stale")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a", [("Cache-Control", "max-stale=10")]), now: cacheT0 + 130).kind, "stale")
        // A request that validates itself gets the server's answer (a plain range is answered:
        // testRangesAreAnsweredFromStoredResponsesAndPiecesAreCombined).
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a", [("If-None-Match", "\"q\"")]), now: cacheT0 + 1).kind, "miss")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a", [("Range", "bytes=0-1"), ("If-Range", "\"q\"")]), now: cacheT0 + 1).kind, "miss")
    }

    /// RFC 9111 §3.3: "A cache MUST NOT use an incomplete response to answer requests unless the
    /// response has been made complete, or the request is partial and specifies a range wholly
    /// within the incomplete response. A cache MUST NOT send a partial response to a client
    /// without explicitly marking it using the 206 (Partial Content) status code." §3.4: "A
    /// response might transfer only a subrange of a representation if the connection closed
    /// prematurely or if the request used one or more Range specifiers ... the cache MAY
    /// combine [stored responses] ... when the new response and stored response have the same
    /// strong validator".
    func testRangesAreAnsweredFromStoredResponsesAndPiecesAreCombined() {
        let cache = makeCache()
        let url = "https://example.com/r"
        func get(_ range: String?) -> HTTPRequest { cacheRequest(url, range.map { [("Range", $0)] } ?? []) }
        func piece(_ a: Int, _ b: Int, of body: String, etag: String) -> CacheStoreResult {
            let request = get("bytes=\(a)-\(b)")
            let bytes = String(Array(body)[a...b])
            let r = cacheResponse(206, [("Cache-Control", "max-age=100"), ("ETag", etag), ("Content-Range", "bytes \(a)-\(b)/\(body.count)")],
                                  body: bytes, request: request)
            return cache.store(request: request, response: r, requestTime: cacheT0, responseTime: cacheT0)
        }
        func served(_ range: String?) -> (Int, String, String?)? {
            guard case .hit(let c) = cache.lookup(get(range), now: cacheT0 + 1) else { return nil }
            let r = c.response(for: get(range))
            return (r.status, r.body.string, r.headers["Content-Range"])
        }
        let body = "abcdefghij"
        XCTAssertEqual(piece(0, 3, of: body, etag: "\"s1\""), .stored)
        XCTAssertNil(served(nil), "a piece never answers a whole request")
        XCTAssertEqual(cache.lookup(get(nil), now: cacheT0 + 1).kind, "miss")
        XCTAssertTrue(served("bytes=1-2")! == (206, "bc", "bytes 1-2/10"), "a range within the piece")
        XCTAssertNil(served("bytes=2-5"), "a range past the piece goes to the server")
        XCTAssertEqual(piece(4, 6, of: body, etag: "\"s1\""), .stored)          // touches: combined
        XCTAssertTrue(served("bytes=2-5")! == (206, "cdef", "bytes 2-5/10"), "now held by the combined piece")
        XCTAssertEqual(piece(6, 9, of: body, etag: "\"s1\""), .stored)          // overlaps, reaches the end: complete
        XCTAssertTrue(served(nil)! == (200, body, nil), "made complete, it answers whole requests")
        XCTAssertTrue(served("bytes=-3")! == (206, "hij", "bytes 7-9/10"), "a complete response answers any range")
        XCTAssertTrue(served("bytes=8-")! == (206, "ij", "bytes 8-9/10"))
        XCTAssertTrue(served("bytes=5-100")! == (206, "fghij", "bytes 5-9/10"))
        XCTAssertNil(served("bytes=10-"), "unsatisfiable: the server answers")
        XCTAssertNil(served("bytes=0-1,3-4"), "several ranges: the server answers")
        XCTAssertEqual(piece(0, 3, of: body, etag: "\"s1\""), .notStored("the complete response with this validator is stored"))

        // Another validator is another representation: never combined with what is stored.
        let other = "ABCDEFGHIJ"
        XCTAssertEqual(piece(5, 9, of: other, etag: "\"s2\""), .stored)
        XCTAssertNil(served(nil), "the new piece replaced the complete response of the old validator")
        XCTAssertNil(served("bytes=0-3"), "and none of the old bytes is served")
        XCTAssertEqual(piece(0, 4, of: body, etag: "\"s1\""), .stored)
        XCTAssertTrue(served("bytes=0-4")! == (206, "abcde", "bytes 0-4/10"))
        XCTAssertNil(served("bytes=0-9"), "pieces of two validators are not put together")

        // A body decoded from a content coding has other positions: never sliced.
        let coded = cacheRequest("https://example.com/coded")
        cache.store(request: coded, response: cacheResponse(200, [("Cache-Control", "max-age=100"), ("Content-Encoding", "gzip")], body: "decoded",
                                                            request: coded), requestTime: cacheT0, responseTime: cacheT0)
        XCTAssertEqual(cache.lookup(cacheRequest(coded.url, [("Range", "bytes=0-1")]), now: cacheT0 + 1).kind, "miss")
        XCTAssertEqual(cache.lookup(coded, now: cacheT0 + 1).kind, "hit")
    }

    func testNoStoreIsNeverStored() {
        let cache = makeCache()
        XCTAssertEqual(put(cache, [("Cache-Control", "no-store, max-age=100")]), .notStored("the response says no-store"))
        XCTAssertEqual(put(cache, [("Cache-Control", "max-age=100")], request: [("Cache-Control", "no-store")]), .notStored("the request says no-store"))
        XCTAssertEqual(cache.lookup(cacheRequest(), now: cacheT0).kind, "miss")
        XCTAssertEqual(cache.stats().memoryEntries, 0)
    }

    func testPoliciesTable() {
        struct Case { let policy: CachePolicy; let fresh: String; let stale: String; let empty: String; let stores: Bool }
        let cases = [
            Case(policy: .default, fresh: "hit", stale: "stale", empty: "miss", stores: true),
            Case(policy: .reload, fresh: "miss", stale: "miss", empty: "miss", stores: true),
            Case(policy: .noStore, fresh: "miss", stale: "miss", empty: "miss", stores: false),
            Case(policy: .preferCache, fresh: "hit", stale: "hit-stale", empty: "miss", stores: true),
            Case(policy: .onlyIfCached, fresh: "hit", stale: "hit-stale", empty: "offline", stores: true),
        ]
        for c in cases {
            let cache = makeCache()
            // Even must-revalidate and no-cache do not stop prefer_cache and only_if_cached.
            put(cache, "https://example.com/fresh", [("Cache-Control", "max-age=100")])
            put(cache, "https://example.com/stale", [("Cache-Control", "max-age=10, must-revalidate, no-cache"), ("ETag", "\"e\"")])
            XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/fresh"), policy: c.policy, now: cacheT0 + 50).kind, c.fresh, "\(c.policy) fresh")
            XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/stale"), policy: c.policy, now: cacheT0 + 50).kind, c.stale, "\(c.policy) stale")
            XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/none"), policy: c.policy, now: cacheT0 + 50).kind, c.empty, "\(c.policy) empty")
            let req = cacheRequest("https://example.com/new")
            let result = cache.store(request: req, response: cacheResponse(200, [("Cache-Control", "max-age=100")], request: req),
                                     requestTime: cacheT0, responseTime: cacheT0, policy: c.policy)
            XCTAssertEqual(result == .stored, c.stores, "\(c.policy) stores")
            XCTAssertEqual(CachePolicy(rawValue: c.policy.rawValue), c.policy)
        }
        XCTAssertEqual(CachePolicy.allCases.map(\.rawValue), ["default", "reload", "no_store", "prefer_cache", "only_if_cached"])
        // A POST under only_if_cached never reaches the network either.
        XCTAssertEqual(makeCache().lookup(cacheRequest(method: "POST"), policy: .onlyIfCached).kind, "offline")
    }

    func testOnlyIfCachedRequestDirectiveKeepsFreshnessRules() {
        let cache = makeCache()
        put(cache, [("Cache-Control", "max-age=100")])
        let request = cacheRequest("https://example.com/a", [("Cache-Control", "only-if-cached")])
        XCTAssertEqual(cache.lookup(request, now: cacheT0 + 50).kind, "hit")
        XCTAssertEqual(cache.lookup(request, now: cacheT0 + 500).kind, "offline")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/b", [("Cache-Control", "only-if-cached")])).kind, "offline")
    }

    func testHostRulesOverrideTheHeaders() throws {
        let cache = makeCache()
        try cache.rule(host: "*.cdn.example.com", ttl: 3600)
        let url = "https://img.cdn.example.com/logo.png"
        let loud = [("Cache-Control", "no-store, no-cache, max-age=0, must-revalidate, private"), ("Vary", "*"), ("Age", "99999"),
                    ("ETag", "\"logo\"")]
        XCTAssertEqual(put(cache, url, loud, body: "png"), .stored)
        XCTAssertEqual(cache.lookup(cacheRequest(url, [("Accept", "image/webp")]), now: cacheT0 + 3000).kind, "hit")
        guard case .hit(let stored) = cache.lookup(cacheRequest(url), now: cacheT0 + 3000) else { return XCTFail() }
        XCTAssertEqual(stored.response(for: cacheRequest(url)).headers["Age"], "3000")     // time since stored; Age ignored
        XCTAssertEqual(stored.hostRule?.pattern, "*.cdn.example.com")
        let late = cache.lookup(cacheRequest(url), now: cacheT0 + 4000)
        XCTAssertEqual(late.kind, "stale")
        XCTAssertEqual(late.revalidationFields.first?.1, "\"logo\"")
        XCTAssertEqual(late.stored?.mayServeStale, true)
        // The request's own directives still count.
        XCTAssertEqual(cache.lookup(cacheRequest(url, [("Cache-Control", "no-cache")]), now: cacheT0 + 1).kind, "stale")
        XCTAssertEqual(put(cache, url, [], request: [("Cache-Control", "no-store")]), .notStored("the request says no-store"))
        // Error statuses follow the RFC, and the rule's domain itself is not matched.
        XCTAssertEqual(put(cache, "https://img.cdn.example.com/missing", [("Cache-Control", "no-store")], status: 404),
                       .notStored("the response says no-store"))
        XCTAssertEqual(put(cache, "https://cdn.example.com/x", [("Cache-Control", "no-store")]), .notStored("the response says no-store"))
        // The most specific rule applies; rules can be replaced and removed.
        try cache.rule(host: "*", ttl: 10)
        try cache.rule(host: "IMG.cdn.example.com", ttl: 100_000)
        XCTAssertEqual(cache.lookup(cacheRequest(url), now: cacheT0 + 50_000).kind, "hit")
        XCTAssertTrue(cache.removeRule(host: "img.cdn.example.com"))
        XCTAssertEqual(cache.lookup(cacheRequest(url), now: cacheT0 + 50_000).kind, "stale")
        XCTAssertEqual(cache.rules.map(\.pattern).sorted(), ["*", "*.cdn.example.com"])
        XCTAssertThrowsError(try cache.rule(host: "a.*.com", ttl: 1)) { XCTAssertEqual(($0 as? LunetError)?.kind, .argument) }
        XCTAssertThrowsError(try cache.rule(host: "x.com", ttl: -5))
    }

    func testRedirectedResponsesAreStoredUnderTheirOwnURL() {
        let cache = makeCache()
        let req = cacheRequest("https://example.com/old")
        let r = cacheResponse(200, [("Cache-Control", "max-age=100")], request: req, url: "https://example.com/new", redirects: 1)
        XCTAssertEqual(cache.store(request: req, response: r, requestTime: cacheT0, responseTime: cacheT0), .stored)
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/old"), now: cacheT0).kind, "miss")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/new"), now: cacheT0).kind, "hit")
    }

    func testQualifiedNoCacheFieldsAreNotServedWithoutValidation() {
        let cache = makeCache()
        put(cache, [("Cache-Control", "max-age=100, no-cache=\"X-Secret\""), ("X-Secret", "s"), ("X-Plain", "p")])
        guard case .hit(let stored) = cache.lookup(cacheRequest(), now: cacheT0) else { return XCTFail() }
        let r = stored.response(for: cacheRequest())
        XCTAssertNil(r.headers["X-Secret"])
        XCTAssertEqual(r.headers["X-Plain"], "p")
    }

    /// RFC 9111 §3.1: "Caches MUST include all received response header fields"; Set-Cookie is
    /// not among the exceptions. A qualified no-cache still keeps it out of unvalidated hits.
    func testSetCookieIsStoredAndServedWithAHit() {
        let cache = makeCache()
        put(cache, [("Cache-Control", "max-age=100"), ("Set-Cookie", "session=abc")])
        XCTAssertEqual(cache.lookup(cacheRequest(), now: cacheT0).stored?.response(for: cacheRequest()).headers["Set-Cookie"], "session=abc")
        let other = cacheRequest("https://example.com/b")
        put(cache, other.url, [("Cache-Control", "max-age=100, no-cache=\"Set-Cookie\""), ("Set-Cookie", "session=abc")])
        XCTAssertNil(cache.lookup(other, now: cacheT0).stored?.response(for: other).headers["Set-Cookie"])
    }

    func testHeuristicFreshnessAndItsCap() {
        let cache = makeCache { $0.heuristicCap = 3600 }
        put(cache, [("Last-Modified", HTTPDate.format(cacheT0 - 10 * 86400))])
        guard case .hit(let stored) = cache.lookup(cacheRequest(), now: cacheT0 + 100) else { return XCTFail() }
        XCTAssertTrue(stored.heuristic)
        XCTAssertEqual(stored.freshnessLifetime, 3600)
        XCTAssertEqual(cache.lookup(cacheRequest(), now: cacheT0 + 3601).kind, "stale")
        // Without any validator or freshness, a stored 200 is stale at once and validated with nothing.
        let plain = makeCache()
        put(plain, [])
        let d = plain.lookup(cacheRequest(), now: cacheT0)
        XCTAssertEqual(d.kind, "stale")
        XCTAssertTrue(d.revalidationFields.isEmpty)
    }

    func testStatsListingPurgeAndClear() {
        let cache = makeCache()
        put(cache, "https://example.com/1", [("Cache-Control", "max-age=100")], body: "12345")
        put(cache, "https://example.com/2", [("Cache-Control", "max-age=1")], status: 404, body: "nope")
        _ = cache.lookup(cacheRequest("https://example.com/1"), now: cacheT0 + 10)
        _ = cache.lookup(cacheRequest("https://example.com/2"), now: cacheT0 + 10)
        _ = cache.lookup(cacheRequest("https://example.com/3"), now: cacheT0 + 10)
        var s = cache.stats()
        XCTAssertEqual([s.hits, s.validations, s.misses, s.stores], [1, 1, 1, 2])
        XCTAssertEqual(s.memoryEntries, 2)
        XCTAssertGreaterThan(s.memoryBytes, 9)
        XCTAssertEqual(s.memoryLimit, 1 << 20)
        XCTAssertNil(s.diskDirectory)
        let list = cache.entries(now: cacheT0 + 10)
        XCTAssertEqual(list.map(\.url), ["https://example.com/1", "https://example.com/2"])
        XCTAssertEqual(list.map(\.status), [200, 404])
        XCTAssertEqual(list.map(\.size), [5, 4])
        XCTAssertEqual(list.map(\.isFresh), [true, false])
        XCTAssertEqual(list[0].age, 11, accuracy: 0.001)
        XCTAssertEqual(cache.purge("https://EXAMPLE.com/1#x"), 1)
        XCTAssertEqual(cache.purge("https://example.com/1"), 0)
        XCTAssertEqual(cache.purge("not a url"), 0)
        cache.clear()
        s = cache.stats()
        XCTAssertEqual([s.memoryEntries, s.memoryBytes], [0, 0])
        XCTAssertEqual(s.hits, 1)
    }

    func testThreadsShareOneCacheSafely() {
        let cache = makeCache { $0.memoryLimit = 64 * 1024 }
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for i in 0..<300 {
                let url = "https://example.com/\(i % 37)"
                let req = cacheRequest(url)
                if (i + worker) % 3 == 0 {
                    cache.store(request: req, response: cacheResponse(200, [("Cache-Control", "max-age=100")], body: String(repeating: "x", count: i * 10), request: req),
                                requestTime: cacheT0, responseTime: cacheT0)
                } else if case .hit(let s) = cache.lookup(req, now: cacheT0 + 1) {
                    XCTAssertEqual(s.response(for: req).body.count % 10, 0)
                }
            }
        }
        let s = cache.stats()
        XCTAssertLessThanOrEqual(s.memoryBytes, 64 * 1024)
    }
}

extension CacheHTTPCacheTests {
    func testBodiesStoredStillEncodedServeOnlyRequestsThatWantThem() {
        let cache = makeCache()
        var raw = cacheRequest()
        raw.options.decompress = false
        cache.store(request: raw, response: cacheResponse(200, [("Cache-Control", "max-age=100"), ("Content-Encoding", "gzip")], body: "\u{1F}gz", request: raw),
                    requestTime: cacheT0, responseTime: cacheT0)
        XCTAssertEqual(cache.lookup(cacheRequest(), now: cacheT0).kind, "miss")
        XCTAssertEqual(cache.lookup(raw, now: cacheT0).kind, "hit")
        var decoded = cacheRequest()
        decoded.options.decompress = true
        put(cache, [("Cache-Control", "max-age=100"), ("Content-Encoding", "gzip")], body: "plain")
        XCTAssertEqual(cache.lookup(decoded, now: cacheT0).stored?.entry.body.string, "plain")
        XCTAssertEqual(cache.lookup(raw, now: cacheT0).stored?.entry.body.string, "\u{1F}gz")
    }
}
