import Foundation
import XCTest
@testable import LunetCore

/// A handle a finished transfer leaves configured is reused, without a reset, by the next
/// transfer of the same profile (method, options, no body): that transfer must carry nothing of
/// the one before, and transfers of other profiles must not get the handle.
final class ConfiguredHandleTests: XCTestCase {
    var httpbin: String { httpbinURL() }

    /// Sends `request` on `session` and turns the loop until the answer is in.
    func send(_ session: Session, _ request: HTTPRequest) -> (status: Int, body: String, url: String) {
        var outcome: (Int, String, String)?
        session.send(request) { result in
            switch result {
            case .success(let r): outcome = (r.status, r.body.string, r.url)
            case .failure(let e): outcome = (0, "failed: \(e)", "")
            }
        }
        session.loop.run { outcome != nil }
        return outcome ?? (0, "the loop went idle without an answer", "")
    }

    func testTheNextRequestOfTheSameProfileReusesTheHandleAndCarriesNothingOver() {
        let loop = EventLoop()
        let session = Session(loop: loop)
        var first = HTTPRequest(url: httpbin + "/redirect-to?url=%2Fheaders")
        first.headers.add("X-First", "1")
        let a = send(session, first)
        XCTAssertEqual(a.status, 200)
        XCTAssertTrue(a.body.contains("X-First"), a.body)
        XCTAssertTrue(a.url.hasSuffix("/headers"), "the redirect was followed: \(a.url)")
        let reusesBefore = loop.configuredHandleReuses

        let b = send(session, HTTPRequest(url: httpbin + "/headers"))
        XCTAssertEqual(loop.configuredHandleReuses, reusesBefore + 1, "the second GET reused the configured handle")
        XCTAssertEqual(b.status, 200)
        XCTAssertFalse(b.body.contains("X-First"), "no header of the request before: \(b.body)")
        XCTAssertTrue(b.url.hasSuffix("/headers"), b.url)
    }

    func testOtherProfilesGetAResetHandle() {
        let loop = EventLoop()
        let session = Session(loop: loop)
        _ = send(session, HTTPRequest(url: httpbin + "/get"))
        let reuses = loop.configuredHandleReuses

        // A HEAD, a POST with a body and a GET with a timeout differ from the plain GET.
        let head = send(session, HTTPRequest(method: "HEAD", url: httpbin + "/get"))
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.body, "", "a HEAD has no body")
        let post = send(session, HTTPRequest(method: "POST", url: httpbin + "/post", body: .bytes(ByteBuffer("x=1"))))
        XCTAssertTrue(post.body.contains("\"x=1\""), post.body)
        var timed = HTTPRequest(url: httpbin + "/get")
        timed.options.timeout = 5
        XCTAssertEqual(send(session, timed).status, 200)
        XCTAssertEqual(loop.configuredHandleReuses, reuses, "no other profile took the plain GET's handle")

        // The plain GET's handle is still there for the next plain GET, which stays a GET.
        let get = send(session, HTTPRequest(url: httpbin + "/anything"))
        XCTAssertEqual(loop.configuredHandleReuses, reuses + 1)
        XCTAssertTrue(get.body.contains("\"method\": \"GET\"") || get.body.contains("\"method\":\"GET\""), get.body)
    }

    /// Sessions with in-memory cookie jars: a jar's handle waits configured, its share attached,
    /// and is taken again by that jar's next request only. Two sessions' cookies never cross,
    /// whichever handle a request gets; a session without a jar sends none.
    func testAJarsHandleIsReusedByThatJarOnlyAndCookiesNeverCross() {
        let loop = EventLoop()
        let a = Session(loop: loop, cookies: CookieJar(loop: loop))
        let b = Session(loop: loop, cookies: CookieJar(loop: loop))
        let none = Session(loop: loop)
        // httpbin's /cookies, its spaces taken out
        func cookies(_ s: Session) -> String { send(s, HTTPRequest(url: httpbin + "/cookies")).body.filter { $0 != " " } }
        XCTAssertEqual(send(a, HTTPRequest(url: httpbin + "/cookies/set/who/a")).status, 200)
        let reuses = loop.configuredHandleReuses
        XCTAssertTrue(cookies(a).contains("\"who\":\"a\""), "a's own cookie")
        XCTAssertEqual(loop.configuredHandleReuses, reuses + 1, "a's second GET took a's configured handle")
        for round in 0..<3 {
            let fromB = cookies(b)
            XCTAssertFalse(fromB.contains("\"a\""), "round \(round): b sent none of a's cookies: \(fromB)")
            let fromNone = cookies(none)
            XCTAssertFalse(fromNone.contains("who"), "round \(round): a session without a jar sent no cookie: \(fromNone)")
            let fromA = cookies(a)
            XCTAssertTrue(fromA.contains("\"who\":\"a\""), "round \(round): a kept its own: \(fromA)")
        }
        XCTAssertEqual(send(b, HTTPRequest(url: httpbin + "/cookies/set/who/b")).status, 200)
        XCTAssertTrue(cookies(b).contains("\"who\":\"b\""), "b's own")
        XCTAssertTrue(cookies(a).contains("\"who\":\"a\""), "a's still a's")
    }

    /// A jar with a file reuses its handle as an in-memory one does, and still writes its file
    /// when it ends, the handle waiting with its share let go first.
    func testAFileJarReusesItsHandleAndWritesItsFileWhenItEnds() throws {
        let path = NSTemporaryDirectory() + "lunet-jar-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).txt"
        defer { unlink(path) }
        let loop = EventLoop()
        do {
            let s = Session(loop: loop, cookies: CookieJar(loop: loop, file: path))
            XCTAssertEqual(send(s, HTTPRequest(url: httpbin + "/cookies/set/who/f")).status, 200)
            let reuses = loop.configuredHandleReuses
            XCTAssertTrue(send(s, HTTPRequest(url: httpbin + "/cookies")).body.filter { $0 != " " }.contains("\"who\":\"f\""))
            XCTAssertEqual(loop.configuredHandleReuses, reuses + 1, "the file jar's second GET took its configured handle")
        }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(text.contains("\twho\tf"), "the jar wrote its cookie when it ended: \(text)")
    }

    /// A jar's configured handle that fails to be set up again (a URL libcurl refuses) goes back
    /// reset, its share detached: the next request on it, from a session without cookies,
    /// carries none of the jar's.
    func testAReusedJarHandleThatFailsToConfigureKeepsNoCookie() {
        let loop = EventLoop()
        let a = Session(loop: loop, cookies: CookieJar(loop: loop))
        let none = Session(loop: loop)
        XCTAssertEqual(send(a, HTTPRequest(url: httpbin + "/cookies/set/who/a")).status, 200)
        XCTAssertEqual(send(a, HTTPRequest(url: httpbin + "/get")).status, 200)   // leaves a configured handle of a's
        let reuses = loop.configuredHandleReuses
        let huge = send(a, HTTPRequest(url: httpbin + "/get?x=" + String(repeating: "a", count: 9_000_000)))
        XCTAssertEqual(loop.configuredHandleReuses, reuses + 1, "the failing request took a's configured handle")
        XCTAssertEqual(huge.status, 0, "libcurl refuses a URL of 9 MB: \(huge.body.prefix(200))")
        let body = send(none, HTTPRequest(url: httpbin + "/cookies")).body
        XCTAssertFalse(body.contains("who"), "a session without a jar got a's cookie: \(body)")
    }

    /// A redirect hop has no profile: a 303 turns a POST into a GET, and the GET's handle kept
    /// under the POST's profile sent the next POST as a GET.
    func testARedirectHopKeepsNoHandleUnderTheRequestsProfile() {
        let loop = EventLoop()
        let session = Session(loop: loop, cookies: CookieJar(loop: loop))
        func method(_ r: (status: Int, body: String, url: String)) -> String {
            r.body.filter { $0 != " " }.components(separatedBy: "\"method\":\"").dropFirst().first?.prefix { $0 != "\"" }.description ?? "?"
        }
        // With a credential, lunet follows the redirect itself (a hop), as it drops credentials
        // on a redirect to another origin.
        func post(_ path: String) -> HTTPRequest {
            var r = HTTPRequest(method: "POST", url: httpbin + path)
            r.headers.add("Authorization", "Bearer t")
            return r
        }
        XCTAssertEqual(method(send(session, post("/anything"))), "POST")
        let hopped = send(session, post("/redirect-to?url=%2Fanything&status_code=303"))
        XCTAssertEqual(method(hopped), "GET", "a 303 is followed with a GET: \(hopped.body.prefix(300))")
        XCTAssertEqual(method(send(session, post("/anything"))), "POST", "the next POST is a POST")
    }

    /// A jar holds its loop; the loop's configured handles name the jar without holding it, so
    /// sessions with cookies that end let the loop end, and their handles make room.
    func testJarsThatEndLetTheLoopEndAndFreeTheirHandles() {
        weak var weakLoop: EventLoop?
        do {
            let loop = EventLoop()
            weakLoop = loop
            let plain = Session(loop: loop)
            for _ in 0..<70 {   // more sessions with cookies than the loop keeps configured handles
                let s = Session(loop: loop, cookies: CookieJar(loop: loop))
                XCTAssertEqual(send(s, HTTPRequest(url: httpbin + "/get")).status, 200)
                XCTAssertEqual(send(s, HTTPRequest(url: httpbin + "/get")).status, 200)
            }
            XCTAssertEqual(send(plain, HTTPRequest(url: httpbin + "/get")).status, 200)
            let reuses = loop.configuredHandleReuses
            XCTAssertEqual(send(plain, HTTPRequest(url: httpbin + "/get")).status, 200)
            XCTAssertEqual(loop.configuredHandleReuses, reuses + 1, "ended jars left room: a plain GET still finds its handle")
        }
        XCTAssertNil(weakLoop, "the loop ended with its sessions (no cycle through a jar)")
    }
}

/// A reused handle keeps what curl reads by pointer (EasyHandle): its URL handle and header list
/// are set again only when they differ from the last transfer's, and its error buffer is its
/// own. What a transfer sends and reports must still be its own.
final class EasyHandleOptionsTests: XCTestCase {
    var httpbin: String { httpbinURL() }

    func send(_ session: Session, _ request: HTTPRequest) -> (status: Int, body: String, url: String, error: String) {
        var outcome: (Int, String, String, String)?
        session.send(request) { result in
            switch result {
            case .success(let r): outcome = (r.status, r.body.string, r.url, "")
            case .failure(let e): outcome = (0, "", "", e.message)
            }
        }
        session.loop.run { outcome != nil }
        return outcome ?? (0, "", "", "the loop went idle without an answer")
    }

    func testTheSameURLAndHeadersSetNothingAndOthersAreSetAgain() {
        let loop = EventLoop()
        let session = Session(loop: loop)
        let a = httpbin + "/anything/a", b = httpbin + "/anything/b"
        XCTAssertEqual(send(session, HTTPRequest(url: a)).status, 200)
        let kept = loop.handlesReusedAsTheyWere
        let again = send(session, HTTPRequest(url: a))
        XCTAssertEqual(loop.handlesReusedAsTheyWere, kept + 1, "the same URL and header lines: nothing set")
        XCTAssertTrue(again.body.contains("/anything/a"), again.body)
        // A, B, A on the one handle: each time the URL it was asked for.
        for (url, name) in [(b, "/anything/b"), (a, "/anything/a"), (b, "/anything/b")] {
            let r = send(session, HTTPRequest(url: url))
            XCTAssertTrue(r.body.contains(name) && r.url.hasSuffix(name), "\(name): \(r.url) \(r.body)")
        }
        // Header lines that change and change back.
        var withHeader = HTTPRequest(url: a)
        withHeader.headers.add("X-Probe", "one")
        XCTAssertTrue(send(session, withHeader).body.contains("X-Probe"))
        XCTAssertFalse(send(session, HTTPRequest(url: a)).body.contains("X-Probe"), "the plain request's lines again")
        XCTAssertTrue(send(session, withHeader).body.contains("\"one\""))
    }

    /// A port nothing listens on: bound, then closed.
    func closedPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = bind(fd, $0, len) } }
        withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    func testEachFailureReportsItsOwnMessage() {
        let loop = EventLoop()
        let session = Session(loop: loop)
        let p1 = closedPort()
        var p2 = closedPort()
        for _ in 0..<10 where p2 == p1 { p2 = closedPort() }
        XCTAssertEqual(send(session, HTTPRequest(url: httpbin + "/get")).status, 200)
        let first = send(session, HTTPRequest(url: "http://127.0.0.1:\(p1)/x"))
        XCTAssertEqual(first.status, 0)
        XCTAssertTrue(first.error.contains(String(p1)), "libcurl's message for this transfer: \(first.error)")
        let ok = send(session, HTTPRequest(url: httpbin + "/get"))
        XCTAssertEqual(ok.status, 200, ok.error)
        let second = send(session, HTTPRequest(url: "http://127.0.0.1:\(p2)/y"))
        XCTAssertTrue(second.error.contains(String(p2)) && !second.error.contains(String(p1)), "its own message, not the one before: \(second.error)")
    }
}
