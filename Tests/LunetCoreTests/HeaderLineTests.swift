import XCTest
@testable import LunetCore

/// Header lines as curl hands them over, including hostile ones (found by fuzz-headers).
final class HeaderLineTests: XCTestCase {
    func feed(_ lines: [String]) -> Transfer {
        let t = Transfer(request: HTTPRequest(url: "http://h/")) { _ in }
        for line in lines {
            var bytes = Array((line + "\r\n").utf8)
            let n = bytes.count
            XCTAssertEqual(bytes.withUnsafeMutableBytes { t.receiveHeaderLine($0.baseAddress!, n) }, n)
        }
        return t
    }

    func testStatusLineAndFields() {
        let t = feed(["HTTP/1.1 404 Not Found", "Content-Type:  text/plain ", "X-Empty:"])
        XCTAssertEqual(t.currentStatus, 404)
        XCTAssertEqual(t.headers["content-type"], "text/plain")
        XCTAssertEqual(t.headers["X-Empty"], "")
    }

    func testAStatusCodeWithTwentyDigitsDoesNotTrap() {
        // Fuzz/regressions/fuzz-headers/F1-*: this used to overflow Int and kill the process.
        let t = feed(["HTTP/1.1 99999999999999999999: x"])
        XCTAssertEqual(t.currentStatus, 0, "not a status code")
        let u = feed(["HTTP/1.1 2000 OK"])
        XCTAssertEqual(u.currentStatus, 0, "four digits are not a status code either")
    }

    func testALaterResponseStartsAfresh() {
        let t = feed(["HTTP/1.1 301 Moved", "Location: /x", "HTTP/2 200", "ETag: \"a\""])
        XCTAssertEqual(t.currentStatus, 200)
        XCTAssertNil(t.headers["Location"])
        XCTAssertEqual(t.headers["etag"], "\"a\"")
    }
}
