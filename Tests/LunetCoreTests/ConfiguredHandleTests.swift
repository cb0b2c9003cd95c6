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
}
