import Foundation
import XCTest
@testable import LunetCore

/// A session's cookies on the loop's pooled curl handles.
final class CookieJarTests: XCTestCase {
    var httpbin: String { httpbinURL() }

    /// Sends `url` on `session` and turns the loop until the answer is in.
    func get(_ session: Session, _ url: String) -> String {
        var body: String?
        session.send(HTTPRequest(method: "GET", url: url)) { result in
            switch result {
            case .success(let r): body = "\(r.status) \(r.body.string)"
            case .failure(let e): body = "failed: \(e)"
            }
        }
        session.loop.run { body != nil }
        return body ?? "the loop went idle without an answer"
    }

    /// Handles go back to the pool with their cookie engine off and come out of it with the jar
    /// of the session that uses them next. Under scripts/sanitize this is also the regression
    /// test for a leak: libcurl 7.88's curl_easy_reset dropped each handle's list of cookie
    /// files unfreed (one node per request with cookies), which LeakSanitizer reported at exit
    /// until the loop freed the list before resetting.
    func testCookiesOnReusedHandles() {
        let loop = EventLoop()
        let withJar = Session(loop: loop, cookies: CookieJar(loop: loop))
        let without = Session(loop: loop)
        _ = get(withJar, httpbin + "/cookies/set?probe=42")
        for i in 0..<20 {
            let carried = get(withJar, httpbin + "/cookies")
            XCTAssertTrue(carried.hasPrefix("200 ") && carried.contains("\"probe\""), "request \(i) with the jar: \(carried)")
            let plain = get(without, httpbin + "/cookies")
            XCTAssertTrue(plain.hasPrefix("200 ") && !plain.contains("probe"), "request \(i) without a jar: \(plain)")
        }
    }
}
