import XCTest
@testable import LunetCore

/// HTTPCache's keys beyond the URL (Vary, the credentials a request carries) and what each
/// method does to stored responses (HEAD, POST, unsafe methods). Helpers: CacheHTTPCacheTests.
extension CacheHTTPCacheTests {
    func testVariantsAreSelectedByVary() {
        let cache = makeCache()
        for lang in ["en", "fr"] {
            XCTAssertEqual(put(cache, [("Cache-Control", "max-age=100"), ("Vary", "Accept-Language")], body: "in \(lang)",
                               request: [("Accept-Language", lang)]), .stored)
        }
        put(cache, [("Cache-Control", "max-age=100"), ("Vary", "Accept-Language")], body: "no language")
        func body(_ headers: [(String, String)]) -> String? {
            cache.lookup(cacheRequest("https://example.com/a", headers), now: cacheT0 + 1).stored?.entry.body.string
        }
        XCTAssertEqual(body([("accept-language", "en")]), "in en")
        XCTAssertEqual(body([("Accept-Language", " fr ")]), "in fr")
        XCTAssertNil(body([("Accept-Language", "de")]))
        XCTAssertEqual(body([]), "no language")
        XCTAssertEqual(cache.stats().memoryEntries, 3)
        // The same variant again replaces it.
        put(cache, [("Cache-Control", "max-age=100"), ("Vary", "Accept-Language")], body: "in en, v2", request: [("Accept-Language", "en")])
        XCTAssertEqual(body([("Accept-Language", "en")]), "in en, v2")
        XCTAssertEqual(cache.stats().memoryEntries, 3)
    }

    func testTheNewestMatchingVariantWins() {
        let cache = makeCache()
        put(cache, [("Cache-Control", "max-age=100"), ("Vary", "Accept")], body: "old", request: [("Accept", "a")], at: cacheT0)
        put(cache, [("Cache-Control", "max-age=100")], body: "new", at: cacheT0 + 10)   // no Vary now: matches any request
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a", [("Accept", "a")]), now: cacheT0 + 11).stored?.entry.body.string, "new")
    }

    func testVaryStarIsNotStored() {
        let cache = makeCache()
        XCTAssertEqual(put(cache, [("Cache-Control", "max-age=100"), ("Vary", "*")]), .notStored("Vary: * never matches a later request"))
    }

    func testCredentialsKeepResponsesApart() {
        let cache = makeCache()
        put(cache, [("Cache-Control", "max-age=100")], body: "alice's", request: [("Authorization", "Bearer alice")])
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a", [("Authorization", "Bearer alice")]), now: cacheT0).stored?.entry.body.string, "alice's")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a", [("Authorization", "Bearer bob")]), now: cacheT0).kind, "miss")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a"), now: cacheT0).kind, "miss")
        put(cache, [("Cache-Control", "max-age=100")], body: "public")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a"), now: cacheT0).stored?.entry.body.string, "public")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/a", [("Authorization", "Bearer carol")]), now: cacheT0).kind, "miss")
        // User information in the URL is a credential too, and never part of the stored key.
        put(cache, "https://u:p@example.com/b", [("Cache-Control", "max-age=100")], body: "u's")
        XCTAssertEqual(cache.lookup(cacheRequest("https://u:p@example.com/b"), now: cacheT0).kind, "hit")
        XCTAssertEqual(cache.lookup(cacheRequest("https://v:p@example.com/b"), now: cacheT0).kind, "miss")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/b"), now: cacheT0).kind, "miss")
        for e in cache.memory.allEntries() {
            XCTAssertFalse(e.credential.contains("alice") || e.key.contains("u:p") || e.url.contains("alice"))
        }
    }

    /// Digest and .netrc credentials never appear as a request field (libcurl adds the
    /// Authorization), yet they are credentials: a response to them serves them alone.
    func testDigestAndNetrcCredentialsKeepResponsesApart() {
        let cache = makeCache()
        func request(digest: (String, String)? = nil, netrc: String? = nil) -> HTTPRequest {
            var r = cacheRequest("https://example.com/d")
            if let (user, password) = digest { r.options.curlAuth = CurlAuth(.digest, user: user, password: password) }
            r.options.netrcFile = netrc
            return r
        }
        func store(_ r: HTTPRequest, _ body: String) {
            cache.store(request: r, response: cacheResponse(200, [("Cache-Control", "max-age=100")], body: body, request: r),
                        requestTime: cacheT0 - 1, responseTime: cacheT0)
        }
        store(request(digest: ("alice", "a-pass")), "alice's")
        XCTAssertEqual(cache.lookup(request(digest: ("alice", "a-pass")), now: cacheT0).stored?.entry.body.string, "alice's")
        XCTAssertEqual(cache.lookup(request(digest: ("alice", "guess")), now: cacheT0).kind, "miss")
        XCTAssertEqual(cache.lookup(request(), now: cacheT0).kind, "miss")
        store(request(netrc: "/home/a/.netrc"), "netrc's")
        XCTAssertEqual(cache.lookup(request(netrc: "/home/a/.netrc"), now: cacheT0).stored?.entry.body.string, "netrc's")
        XCTAssertEqual(cache.lookup(request(), now: cacheT0).kind, "miss")
        for e in cache.memory.allEntries() { XCTAssertFalse(e.credential.contains("alice") || e.credential.contains("pass")) }
    }

    func testHeadIsAnsweredFromGetButNotStored() {
        let cache = makeCache()
        put(cache, [("Cache-Control", "max-age=100"), ("Content-Length", "5")])
        let head = cacheRequest(method: "HEAD")
        guard case .hit(let stored) = cache.lookup(head, now: cacheT0 + 1) else { return XCTFail() }
        let r = stored.response(for: head)
        XCTAssertEqual(r.body.count, 0)
        XCTAssertEqual(r.headers["Content-Length"], "5")
        let other = cacheRequest("https://example.com/nothing-stored", method: "HEAD")
        let result = cache.store(request: other, response: cacheResponse(200, [("Cache-Control", "max-age=100")], body: "", request: other),
                                 requestTime: cacheT0, responseTime: cacheT0)
        XCTAssertEqual(result, .notStored("only GET responses are stored (not HEAD)"))
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/nothing-stored"), now: cacheT0).kind, "miss")
    }

    /// RFC 9111 §4.3.5: "When a cache makes an inbound HEAD request for a target URI and
    /// receives a 200 (OK) response, the cache SHOULD update or invalidate each of its stored
    /// GET responses that could have been chosen for that request ... If a cache updates a
    /// stored response with the metadata provided in a HEAD response, the cache MUST use the
    /// header fields provided in the HEAD response to update the stored response (see Section
    /// 3.2)."
    func testAHeadResponseFreshensOrInvalidatesTheStoredGet() {
        let cache = makeCache()
        put(cache, [("Cache-Control", "max-age=10"), ("ETag", "\"a\""), ("Content-Length", "5"), ("X-Version", "1")])
        let head = cacheRequest(method: "HEAD")
        let later = cacheT0 + 100
        XCTAssertEqual(cache.lookup(cacheRequest(), now: later).kind, "stale")
        let same = cacheResponse(200, [("Cache-Control", "max-age=600"), ("ETag", "\"a\""), ("Content-Length", "5"), ("X-Version", "2")],
                                 body: "", request: head, date: later)
        XCTAssertEqual(cache.store(request: head, response: same, requestTime: later, responseTime: later), .freshened)
        guard case .hit(let fresh) = cache.lookup(cacheRequest(), now: later + 1) else { return XCTFail("freshened by the HEAD") }
        let r = fresh.response(for: cacheRequest())
        XCTAssertEqual(r.headers["X-Version"], "2", "the HEAD's fields replaced the stored ones")
        XCTAssertEqual(r.body.string, "hello", "the stored body stays")

        let changed = cacheResponse(200, [("Cache-Control", "max-age=600"), ("ETag", "\"b\""), ("Content-Length", "7")],
                                    body: "", request: head, date: later)
        XCTAssertEqual(cache.store(request: head, response: changed, requestTime: later, responseTime: later), .invalidated(1))
        XCTAssertEqual(cache.lookup(cacheRequest(), now: later + 1).kind, "miss", "another representation now: the stored GET is gone")

        put(cache, [("Cache-Control", "max-age=600"), ("ETag", "\"a\"")])
        let notFound = cacheResponse(404, [("ETag", "\"z\"")], body: "", request: head, date: later)
        XCTAssertEqual(cache.store(request: head, response: notFound, requestTime: later, responseTime: later),
                       .notStored("a 404 to a HEAD neither is stored nor updates a stored GET"))
        XCTAssertEqual(cache.lookup(cacheRequest(), now: later).kind, "hit", "only a 200 updates")
    }

    /// RFC 9111 §4.4 first (the POST invalidates its target), then RFC 9110 §9.3.3: a POST
    /// response with explicit freshness and its own URL in Content-Location answers later GETs.
    func testAPostResponseThatIsItsTargetsRepresentationAnswersLaterGets() {
        let cache = makeCache()
        let url = "https://example.com/items/1"
        put(cache, url, [("Cache-Control", "max-age=100")], body: "before")
        let post = cacheRequest(url, method: "POST")
        let r = cacheResponse(200, [("Cache-Control", "max-age=100"), ("Content-Location", "/items/1")], body: "after", request: post)
        XCTAssertEqual(cache.store(request: post, response: r, requestTime: cacheT0, responseTime: cacheT0), .stored)
        guard case .hit(let stored) = cache.lookup(cacheRequest(url), now: cacheT0 + 1) else { return XCTFail("a hit") }
        XCTAssertEqual(stored.response(for: cacheRequest(url)).body.string, "after")
        XCTAssertEqual(cache.lookup(cacheRequest(url, method: "POST"), now: cacheT0 + 1).kind, "miss", "never answers a POST")

        let plain = cacheResponse(200, [("Cache-Control", "max-age=100")], body: "other", request: post)
        XCTAssertEqual(cache.store(request: post, response: plain, requestTime: cacheT0, responseTime: cacheT0), .invalidated(1))
        XCTAssertEqual(cache.lookup(cacheRequest(url), now: cacheT0 + 1).kind, "miss", "without Content-Location: invalidated only")
    }

    func testUnsafeMethodsInvalidate() {
        let cache = makeCache()
        put(cache, "https://example.com/items/1", [("Cache-Control", "max-age=100")])
        put(cache, "https://example.com/items/2", [("Cache-Control", "max-age=100")])
        put(cache, "https://example.com/items/3", [("Cache-Control", "max-age=100")])
        let failed = cacheRequest("https://example.com/items/1", method: "POST")
        XCTAssertEqual(cache.store(request: failed, response: cacheResponse(500, [], request: failed), requestTime: cacheT0, responseTime: cacheT0),
                       .invalidated(0))
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/items/1"), now: cacheT0).kind, "hit")
        let post = cacheRequest("https://example.com/items/1", method: "POST")
        let created = cacheResponse(201, [("Location", "/items/2"), ("Content-Location", "https://elsewhere.example/items/3")], request: post)
        XCTAssertEqual(cache.store(request: post, response: created, requestTime: cacheT0, responseTime: cacheT0), .invalidated(2))
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/items/1"), now: cacheT0).kind, "miss")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/items/2"), now: cacheT0).kind, "miss")
        XCTAssertEqual(cache.lookup(cacheRequest("https://example.com/items/3"), now: cacheT0).kind, "hit")
        let delete = cacheRequest("https://example.com/items/3", method: "DELETE")
        XCTAssertEqual(cache.invalidate(request: delete, response: cacheResponse(204, [], request: delete)), 1)
        XCTAssertEqual(cache.stats().invalidations, 3)
    }
}
