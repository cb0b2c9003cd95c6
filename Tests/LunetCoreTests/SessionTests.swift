import Foundation
import XCTest
@testable import LunetCore

/// What a session does to a request before any transfer (prepare, resolve), how it holds
/// requests back under max_concurrent, and what derived sessions share. prepare and resolve
/// are pure: no server is needed for them.
final class SessionTests: XCTestCase {
    func session(_ configure: (inout Session.Configuration) -> Void = { _ in }) -> Session {
        var c = Session.Configuration()
        configure(&c)
        return Session(loop: EventLoop(), configuration: c)
    }

    func names(_ h: HTTPHeaders) -> [String] { h.fields.map(\.name) }

    // MARK: prepare

    func testPrepareResolvesAgainstTheBaseURL() throws {
        let s = session { $0.baseURL = "http://127.0.0.1:9/api/v1/" }
        XCTAssertEqual(try s.prepare(HTTPRequest(url: "users?page=2")).url, "http://127.0.0.1:9/api/v1/users?page=2")
        XCTAssertEqual(try s.prepare(HTTPRequest(url: "/root")).url, "http://127.0.0.1:9/root")
        XCTAssertEqual(try s.prepare(HTTPRequest(url: "../v2/x#frag")).url, "http://127.0.0.1:9/api/v2/x", "the fragment is never sent")
        XCTAssertEqual(try s.prepare(HTTPRequest(url: "http://127.0.0.1:8/other")).url, "http://127.0.0.1:8/other",
                       "an absolute URL ignores the base")
    }

    func testSessionHeadersComeFirstAndTheRequestsReplaceThemByName() throws {
        let s = session { $0.headers = HTTPHeaders([("X-Session", "s"), ("Accept", "text/plain"), ("X-Keep", "k")]) }
        let r = try s.prepare(HTTPRequest(url: "http://127.0.0.1:9/", headers: HTTPHeaders([("accept", "application/json"), ("X-Own", "o")])))
        XCTAssertEqual(names(r.headers), ["User-Agent", "X-Session", "X-Keep", "accept", "X-Own"],
                       "the default User-Agent, the session's fields, then the request's (its accept replaced the session's)")
        XCTAssertEqual(r.headers.all("Accept"), ["application/json"])
        XCTAssertEqual(r.headers["User-Agent"], "lunet/\(Lunet.version)")
    }

    func testASessionUserAgentReplacesTheDefault() throws {
        let s = session { $0.headers = HTTPHeaders([("user-agent", "mine/1")]) }
        let r = try s.prepare(HTTPRequest(url: "http://127.0.0.1:9/"))
        XCTAssertEqual(r.headers.all("User-Agent"), ["mine/1"])
    }

    func testRemovedHeadersLeaveTheSessionsAndTheDefaultOut() throws {
        let s = session { $0.headers = HTTPHeaders([("X-Session", "s"), ("X-Other", "o")]); $0.auth = .bearer("t") }
        var request = HTTPRequest(url: "http://127.0.0.1:9/")
        request.removedHeaders = ["x-session", "User-Agent", "Authorization"]
        let r = try s.prepare(request)
        XCTAssertEqual(names(r.headers), ["X-Other"])
    }

    func testAuthIsASessionFieldThatTheRequestsOwnAuthorizationReplaces() throws {
        let s = session { $0.auth = .basic(user: "u", password: "p") }
        XCTAssertEqual(try s.prepare(HTTPRequest(url: "http://127.0.0.1:9/")).headers["Authorization"], "Basic dTpw")
        let own = try s.prepare(HTTPRequest(url: "http://127.0.0.1:9/", headers: HTTPHeaders([("Authorization", "Bearer mine")])))
        XCTAssertEqual(own.headers.all("Authorization"), ["Bearer mine"])

        let digest = session { $0.auth = .digest(user: "u", password: "p") }
        XCTAssertEqual(try digest.prepare(HTTPRequest(url: "http://127.0.0.1:9/")).options.curlAuth?.user, "u")
        let digestOwn = try digest.prepare(HTTPRequest(url: "http://127.0.0.1:9/", headers: HTTPHeaders([("Authorization", "Bearer mine")])))
        XCTAssertNil(digestOwn.options.curlAuth, "a request's own Authorization replaces libcurl's schemes too")
    }

    func testRequestOptionsAreLaidOverTheSessions() throws {
        let s = session {
            $0.options.timeout = 30
            $0.options.maxRedirects = 3
            $0.options.insecure = true
        }
        var request = HTTPRequest(url: "http://127.0.0.1:9/")
        request.options.timeout = 2
        request.options.insecure = false
        let r = try s.prepare(request)
        XCTAssertEqual(r.options.timeout, 2, "the request's own")
        XCTAssertEqual(r.options.insecure, false, "the request's own, even when it is false")
        XCTAssertEqual(r.options.maxRedirects, 3, "the session's where the request says nothing")
    }

    func testAnAPIKeyQueryIsAddedUnlessTheRequestHasIt() throws {
        let s = session { $0.auth = .apiKeyQuery(name: "api key", value: "a&b") }
        XCTAssertEqual(try s.prepare(HTTPRequest(url: "http://127.0.0.1:9/p?x=1#f")).url, "http://127.0.0.1:9/p?x=1&api%20key=a%26b")
        XCTAssertEqual(try s.prepare(HTTPRequest(url: "http://127.0.0.1:9/p?api%20key=own")).url, "http://127.0.0.1:9/p?api%20key=own")
    }

    // MARK: resolve

    func resolveError(_ s: Session, _ url: String, webSocket: Bool = false) -> String {
        do {
            let r = try s.resolve(url, webSocket: webSocket)
            return "resolved to \(r)"
        } catch {
            XCTAssertEqual(error.kind, .argument, url)
            return error.message
        }
    }

    func testResolveNamesWhatIsWrongWithTheURL() {
        let plain = session()
        XCTAssertTrue(resolveError(plain, "/relative").contains("not absolute, and the session has no base_url"))
        XCTAssertTrue(resolveError(session { $0.isImplicit = true }, "/relative").contains("it needs a scheme: http:// or https://"))
        XCTAssertTrue(resolveError(plain, "http://127.0.0.1/a b").contains("spaces or control characters"))
        XCTAssertTrue(resolveError(plain, "ftp://127.0.0.1/x").contains("only http and https"))
        XCTAssertTrue(resolveError(plain, "http:///path").contains("it has no host"))
        XCTAssertTrue(resolveError(plain, "http://:80/path").contains("it has no host"))
        XCTAssertTrue(resolveError(plain, "ws://127.0.0.1/").contains("only http and https"), "ws: only for WebSockets")
    }

    func testResolveTakesWebSocketSchemesForWebSockets() throws {
        let s = session { $0.baseURL = "wss://127.0.0.1:9/live/" }
        XCTAssertEqual(try s.resolve("feed", webSocket: true), "https://127.0.0.1:9/live/feed")
        XCTAssertEqual(try s.resolve("ws://127.0.0.1:9", webSocket: true), "http://127.0.0.1:9/", "an empty path is /")
    }

    /// The last reference resolved against the base is kept, and answers only the same
    /// reference, the same base and the same kind (WebSocket or not).
    func testTheLastResolvedReferenceAnswersOnlyTheSameOneAgainstTheSameBase() throws {
        var s = session { $0.baseURL = "wss://127.0.0.1:9/live/" }
        XCTAssertEqual(try s.resolve("feed", webSocket: true), "https://127.0.0.1:9/live/feed")
        XCTAssertEqual(try s.resolve("feed", webSocket: true), "https://127.0.0.1:9/live/feed", "again")
        XCTAssertTrue(resolveError(s, "feed").contains("only http and https"), "not for a request that is no WebSocket")
        XCTAssertEqual(try s.resolve("other", webSocket: true), "https://127.0.0.1:9/live/other")
        s.configuration.baseURL = "http://127.0.0.1:8/api/"
        XCTAssertEqual(try s.resolve("feed"), "http://127.0.0.1:8/api/feed", "a new base resolves anew")
        XCTAssertEqual(try s.resolve("feed"), "http://127.0.0.1:8/api/feed")
        s.configuration.baseURL = nil
        XCTAssertTrue(resolveError(s, "feed").contains("no base_url"), "no base, no answer from before")
        s = session { $0.baseURL = "http://127.0.0.1:9/" }
        XCTAssertEqual(try s.resolve("a b".replacingOccurrences(of: " ", with: "%20")), "http://127.0.0.1:9/a%20b")
        XCTAssertTrue(resolveError(s, "a b").contains("spaces"), "a reference that fails is never kept")
    }

    func testResolveFailureReachesTheCompletionOnALaterTurn() {
        let s = session()
        var outcome: Result<HTTPResponse, LunetError>?
        let t = s.send(HTTPRequest(url: "nope")) { outcome = $0 }
        XCTAssertNil(outcome, "not from inside send")
        s.loop.run { outcome != nil }
        guard case .failure(let e)? = outcome else { return XCTFail("\(String(describing: outcome))") }
        XCTAssertEqual(e.kind, .argument)
        XCTAssertEqual(t.state, .finished)
    }

    // MARK: max_concurrent

    func testMaxConcurrentHoldsTheRestInAFirstInFirstOutLine() {
        let s = session { $0.maxConcurrent = 2 }
        var order: [Int] = []
        var statuses: [Int] = []
        var counts: [(running: Int, waiting: Int)] = []
        var transfers: [Transfer] = []
        for i in 0..<5 {
            transfers += [s.send(HTTPRequest(url: httpbinURL() + "/get?n=\(i)")) { result in
                order.append(i)
                if case .success(let r) = result { statuses.append(r.status) }
                counts.append((s.runningCount, s.waitingCount))
            }]
        }
        XCTAssertEqual(transfers.map(\.state), [.running, .running, .created, .created, .created], "the first two sent run")
        XCTAssertEqual(s.runningCount, 2)
        XCTAssertEqual(s.waitingCount, 3)
        XCTAssertEqual(s.loop.liveTransfers, 2, "only two are on the network")
        s.loop.run { order.count == 5 }
        XCTAssertEqual(statuses, [200, 200, 200, 200, 200])
        XCTAssertTrue(counts.allSatisfy { $0.running <= 2 }, "\(counts)")
        XCTAssertEqual(s.runningCount, 0)
        XCTAssertEqual(s.waitingCount, 0)
    }

    func testOneAtATimeFinishesInTheOrderSent() {
        let s = session { $0.maxConcurrent = 1 }
        var order: [Int] = []
        // The first answer is the slowest: a line that were not FIFO, or not a line, would
        // let a later one finish first.
        s.send(HTTPRequest(url: httpbinURL() + "/delay/1")) { _ in order.append(0) }
        for i in 1..<4 { s.send(HTTPRequest(url: httpbinURL() + "/get?n=\(i)")) { _ in order.append(i) } }
        s.loop.run { order.count == 4 }
        XCTAssertEqual(order, [0, 1, 2, 3])
    }

    func testARequestCancelledWhileWaitingNeverStartsAndFreesNothing() {
        let s = session { $0.maxConcurrent = 1 }
        var results: [Int: Result<HTTPResponse, LunetError>] = [:]
        s.send(HTTPRequest(url: httpbinURL() + "/get?n=0")) { results[0] = $0 }
        let waiting = s.send(HTTPRequest(url: httpbinURL() + "/get?n=1")) { results[1] = $0 }
        s.send(HTTPRequest(url: httpbinURL() + "/get?n=2")) { results[2] = $0 }
        XCTAssertEqual(s.waitingCount, 2)
        s.loop.cancel(waiting)
        guard case .failure(let e)? = results[1] else { return XCTFail("the cancelled one ends at once") }
        XCTAssertEqual(e.kind, .cancelled)
        XCTAssertEqual(s.runningCount, 1, "the running one keeps its slot")
        s.loop.run { results.count == 3 }
        if case .success(let r)? = results[2] { XCTAssertEqual(r.status, 200) } else { XCTFail("\(String(describing: results[2]))") }
        XCTAssertEqual(s.loop.liveTransfers, 0)
    }

    // MARK: derived sessions

    func testADerivedSessionSharesCookiesAndTheLoopButNotTheConfiguration() {
        let loop = EventLoop()
        var base = Session.Configuration()
        base.headers = HTTPHeaders([("X-Base", "1")])
        let s = Session(loop: loop, configuration: base, cookies: CookieJar(loop: loop))
        var other = Session.Configuration()
        other.baseURL = httpbinURL()
        let d = s.derived(other)
        XCTAssertTrue(d.cookies === s.cookies)
        XCTAssertTrue(d.loop === s.loop)
        XCTAssertNil(try? d.prepare(HTTPRequest(url: "http://127.0.0.1:9/")).headers["X-Base"])

        var done = false
        s.send(HTTPRequest(url: httpbinURL() + "/cookies/set?shared=yes")) { _ in done = true }
        loop.run { done }
        var body = ""
        d.send(HTTPRequest(url: "/cookies")) { result in
            if case .success(let r) = result { body = r.body.string } else { body = "failed: \(result)" }
        }
        loop.run { !body.isEmpty }
        XCTAssertTrue(body.filter { $0 != " " }.contains("\"shared\":\"yes\""), body)
    }
}
