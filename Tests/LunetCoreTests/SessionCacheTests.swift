import Foundation
import XCTest
@testable import LunetCore

/// The session's side of the cache (Session+Cache.swift, Session+Revalidation.swift) against the
/// local servers: a 304 refreshing a stored entry, identical GETs collapsed into one request,
/// and a stored stale response answering in place of an error. The entries are put in the cache
/// directly, dated in the past, so that each test starts from the decision it is about.
final class SessionCacheTests: XCTestCase {
    var nginx: String { nginxURL() }

    /// A path no other test asks for, so that the nginx log lines for it are this test's.
    func unique(_ path: String) -> String { path + "?t=\(UUID().uuidString)" }

    func cachedSession(_ cache: HTTPCache) -> Session {
        var c = Session.Configuration()
        c.cache = cache
        return Session(loop: EventLoop(), configuration: c)
    }

    func send(_ s: Session, _ request: HTTPRequest) -> Result<HTTPResponse, LunetError> {
        var outcome: Result<HTTPResponse, LunetError>?
        s.send(request) { outcome = $0 }
        s.loop.run { outcome != nil }
        return outcome ?? .failure(LunetError(.io, "the loop went idle without an answer"))
    }

    /// Stores `body` for `url` as a response received `age` seconds ago with these fields.
    func storeAged(_ cache: HTTPCache, _ url: String, age: Double, _ headers: [(String, String)], body: String = "stored") {
        let then = HTTPCache.now() - age
        let request = cacheRequest(url)
        let result = cache.store(request: request, response: cacheResponse(200, headers, body: body, request: request, date: then),
                                 requestTime: then, responseTime: then)
        guard case .stored = result else { return XCTFail("not stored: \(result)") }
    }

    /// The nginx access log lines whose request URI is `uri` (path and query), as (method, status).
    /// nginx writes a line when it has sent the response, which may be after the client has it:
    /// a marker request sent afterwards is waited for, so the lines before it are all there.
    func nginxLines(for uri: String, after s: Session) -> [(method: String, status: String)] {
        let log = testServerVariable("LUNET_NGINX_LOG", fallback: "/nonexistent")
        let marker = unique("/small.txt")
        var uncached = HTTPRequest(url: nginx + marker)
        uncached.cachePolicy = .noStore
        _ = send(s, uncached)
        func lines() -> [[Substring]] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map { $0.split(separator: " ") }
        }
        var all = lines()
        for _ in 0..<500 where !all.contains(where: { $0.count > 4 && $0[3] == marker }) {
            usleep(10_000)
            all = lines()
        }
        return all.filter { $0.count > 4 && $0[3] == uri }.map { (String($0[2]), String($0[4])) }
    }

    // MARK: answering at once

    func testAFreshEntryIsAnsweredAtOnceWhenAskedWithoutCallingTheCompletion() {
        let cache = HTTPCache()
        let s = cachedSession(cache)
        let url = nginx + unique("/small.txt")
        storeAged(cache, url, age: 1, [("Cache-Control", "max-age=600")])
        var called = false
        let sent = s.send(HTTPRequest(url: url), answeringAtOnce: true) { _ in called = true }
        guard case .answered(let r) = sent else { return XCTFail("a fresh entry was not answered at once: \(sent)") }
        XCTAssertEqual(r.body.string, "stored")
        XCTAssertEqual(r.cacheStatus, "hit")
        XCTAssertEqual(s.preparations, 1)
        XCTAssertEqual(s.cacheLookups, 1)
        s.loop.runOnce(wait: false)
        XCTAssertFalse(called, "an answer given at once never reaches the completion too")
    }

    func testAMissAskedToAnswerAtOnceStartsTheTransferHavingPreparedAndLookedUpOnce() throws {
        let s = cachedSession(HTTPCache())
        var outcome: Result<HTTPResponse, LunetError>?
        let sent = s.send(HTTPRequest(url: nginx + unique("/small.txt")), answeringAtOnce: true) { outcome = $0 }
        guard case .started = sent else { return XCTFail("a miss was answered at once") }
        s.loop.run { outcome != nil }
        XCTAssertEqual(try outcome?.get().status, 200)
        XCTAssertEqual(s.preparations, 1, "prepared once")
        XCTAssertEqual(s.cacheLookups, 1, "looked up once")
        XCTAssertEqual(cache(of: s).stats().misses, 1)
    }

    func cache(of s: Session) -> HTTPCache { s.configuration.cache! }

    // MARK: 304

    func testA304RefreshesTheStoredEntryAndServesItsBody() throws {
        let cache = HTTPCache()
        let s = cachedSession(cache)
        let uri = unique("/small.txt")
        // nginx's validator for the file, from a request that bypasses the cache.
        var probe = HTTPRequest(url: nginx + uri)
        probe.cachePolicy = .noStore
        let etag = try XCTUnwrap(try send(s, probe).get().headers["ETag"])

        storeAged(cache, nginx + uri, age: 100, [("Cache-Control", "max-age=60"), ("ETag", etag)], body: "stored body")
        XCTAssertEqual(cache.lookup(try s.prepare(HTTPRequest(url: nginx + uri))).kind, "stale")

        let r = try send(s, HTTPRequest(url: nginx + uri)).get()
        XCTAssertEqual(r.status, 200, "the stored status, not the 304")
        XCTAssertEqual(r.cacheStatus, "revalidated")
        XCTAssertEqual(r.body.string, "stored body", "the stored body: the 304 had none")
        XCTAssertEqual(cache.lookup(try s.prepare(HTTPRequest(url: nginx + uri))).kind, "hit", "fresh again for max-age from now")
        XCTAssertEqual(nginxLines(for: uri, after: s).map { "\($0.method) \($0.status)" }, ["GET 200", "GET 304"],
                       "the probe, then one conditional GET answered 304")
    }

    // MARK: collapsing

    func testIdenticalGetsInFlightSendOneRequestAndBothGetTheAnswer() {
        let cache = HTTPCache()
        let s = cachedSession(cache)
        let uri = unique("/small.txt")
        var answers: [Result<HTTPResponse, LunetError>] = []
        let first = s.send(HTTPRequest(url: nginx + uri)) { answers.append($0) }
        let second = s.send(HTTPRequest(url: nginx + uri)) { answers.append($0) }
        XCTAssertEqual(s.loop.liveTransfers, 1, "one transfer on the network")
        XCTAssertEqual(second.state, .running, "the follower waits as a running transfer")
        s.loop.run { answers.count == 2 }
        XCTAssertEqual(answers.count, 2)
        for a in answers {
            XCTAssertEqual((try? a.get())?.body.string, "hello, lunet\n")
            XCTAssertEqual((try? a.get())?.cacheStatus, "miss")
        }
        XCTAssertEqual(first.state, .finished)
        XCTAssertEqual(second.state, .finished)
        XCTAssertEqual(nginxLines(for: uri, after: s).count, 1, "one request reached the server")
        XCTAssertTrue(s.inflight.isEmpty, "nothing left in flight")
    }

    func testGetsWithOtherCredentialsAreNotCollapsed() {
        let cache = HTTPCache()
        let s = cachedSession(cache)
        let uri = unique("/small.txt")
        var answers = 0
        s.send(HTTPRequest(url: nginx + uri, headers: HTTPHeaders([("Authorization", "Bearer a")]))) { _ in answers += 1 }
        s.send(HTTPRequest(url: nginx + uri, headers: HTTPHeaders([("Authorization", "Bearer b")]))) { _ in answers += 1 }
        XCTAssertEqual(s.loop.liveTransfers, 2)
        s.loop.run { answers == 2 }
        XCTAssertEqual(nginxLines(for: uri, after: s).count, 2)
    }

    // MARK: stale instead of an error

    /// httpbin's 503 for a request whose stored response says `cacheControl` and is 100 s old.
    func sendFor503(storedWith cacheControl: String) throws -> (HTTPResponse, HTTPCache, Session) {
        let cache = HTTPCache()
        let s = cachedSession(cache)
        storeAged(cache, httpbinURL() + "/status/503", age: 100, [("Cache-Control", cacheControl)])
        return (try send(s, HTTPRequest(url: httpbinURL() + "/status/503")).get(), cache, s)
    }

    func testAStaleEntryWithStaleIfErrorAnswersForAServerError() throws {
        let (r, _, _) = try sendFor503(storedWith: "max-age=1, stale-if-error=3600")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.body.string, "stored")
        XCTAssertEqual(r.cacheStatus, "stale")
    }

    func testWithoutStaleIfErrorTheServerErrorComesThroughAndReplacesNothing() throws {
        let (r, cache, s) = try sendFor503(storedWith: "max-age=1")
        XCTAssertEqual(r.status, 503)
        XCTAssertEqual(r.cacheStatus, "miss")
        let request = try s.prepare(HTTPRequest(url: httpbinURL() + "/status/503"))
        let kept = cache.lookup(request, policy: .preferCache).stored
        XCTAssertEqual(kept?.response(for: request).body.string, "stored", "the 503 replaced nothing")
    }

    func testAStaleEntryAnswersWhenTheServerCannotBeReached() throws {
        let cache = HTTPCache()
        let s = cachedSession(cache)
        let url = "http://127.0.0.1:1/gone"        // nothing listens on port 1
        storeAged(cache, url, age: 100, [("Cache-Control", "max-age=1, stale-if-error=3600")])
        let r = try send(s, HTTPRequest(url: url)).get()
        XCTAssertEqual(r.body.string, "stored")
        XCTAssertEqual(r.cacheStatus, "stale")
    }

    func testMustRevalidateKeepsTheConnectErrorWhenTheServerCannotBeReached() {
        let cache = HTTPCache()
        let s = cachedSession(cache)
        let url = "http://127.0.0.1:1/gone"
        storeAged(cache, url, age: 100, [("Cache-Control", "max-age=1, must-revalidate")])
        guard case .failure(let e) = send(s, HTTPRequest(url: url)) else { return XCTFail("served a must-revalidate response stale") }
        XCTAssertEqual(e.kind, .connect)
    }

    // MARK: stale-while-revalidate

    func testStaleWhileRevalidateServesAtOnceAndRefreshesInTheBackground() throws {
        let cache = HTTPCache()
        let s = cachedSession(cache)
        let uri = unique("/small.txt")
        storeAged(cache, nginx + uri, age: 100, [("Cache-Control", "max-age=60, stale-while-revalidate=3600")], body: "old")
        let r = try send(s, HTTPRequest(url: nginx + uri)).get()
        XCTAssertEqual(r.body.string, "old")
        XCTAssertEqual(r.cacheStatus, "stale")
        s.loop.run { false }                        // until the background request is done
        XCTAssertTrue(s.revalidating.isEmpty)
        let stored = cache.lookup(try s.prepare(HTTPRequest(url: nginx + uri)), policy: .preferCache).stored
        XCTAssertEqual(stored?.response(for: HTTPRequest(url: nginx + uri)).body.string, "hello, lunet\n",
                       "the background GET stored the file in place of the old body")
        XCTAssertEqual(nginxLines(for: uri, after: s).count, 1, "one background request")
    }
}
