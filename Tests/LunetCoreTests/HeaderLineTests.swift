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
        // A code that is not three digits stops the transfer (the callback takes no byte), kind
        // protocol, whichever libcurl let it through (libcurl 8 reads "2000000" as 200).
        for line in ["HTTP/1.1 99999999999999999999: x", "HTTP/1.1 2000 OK", "HTTP/1.1 2000000 OK", "HTTP/1.1 20x OK"] {
            let t = Transfer(request: HTTPRequest(url: "http://h/")) { _ in }
            var bytes = Array((line + "\r\n").utf8)
            let n = bytes.count
            XCTAssertEqual(bytes.withUnsafeMutableBytes { t.receiveHeaderLine($0.baseAddress!, n) }, 0, line)
            XCTAssertEqual(t.currentStatus, 0, line)
            XCTAssertEqual(t.abortReason?.kind, .protocol, line)
        }
    }

    func testALaterResponseStartsAfresh() {
        let t = feed(["HTTP/1.1 301 Moved", "Location: /x", "HTTP/2 200", "ETag: \"a\""])
        XCTAssertEqual(t.currentStatus, 200)
        XCTAssertNil(t.headers["Location"])
        XCTAssertEqual(t.headers["etag"], "\"a\"")
    }

    func testKeptLinesParseInOrderWithRepeatsAndNoBlankLine() {
        let t = feed(["HTTP/1.1 200 OK", "Set-Cookie: a=1", "Via:\t1.1 x\t", "Set-Cookie: b=2", "no colon here", "Time: 12:30", ""])
        XCTAssertEqual(t.headers.fields.map(\.name), ["Set-Cookie", "Via", "Set-Cookie", "Time"])
        XCTAssertEqual(t.headers.all("set-cookie"), ["a=1", "b=2"], "repeats kept, in order")
        XCTAssertEqual(t.headers["via"], "1.1 x", "tabs trimmed")
        XCTAssertEqual(t.headers["Time"], "12:30", "only the first colon splits")
    }

    func testParsingLinesWithLFOrCRLFAndNoFinalNewline() {
        func parse(_ text: String) -> [String] {
            Array(text.utf8).withUnsafeBufferPointer { HTTPHeaders(parsingLines: $0) }.fields.map { "\($0.name)=\($0.value)" }
        }
        XCTAssertEqual(parse("A: 1\nB : 2\r\nC:3"), ["A=1", "B=2", "C=3"])
        XCTAssertEqual(parse(""), [])
        XCTAssertEqual(parse("\n\r\n"), [], "blank lines are no fields")
        XCTAssertEqual(parse(":v\nX:"), ["=v", "X="], "an empty name or value is kept as sent")
    }

    func testAResponseParsesItsHeaderLinesOnFirstRead() {
        let lines = ByteBuffer("Content-Type: text/plain\nETag: \"x\"\n")
        let r = HTTPResponse(status: 200, reason: "OK", headerLines: lines, body: ByteBuffer(), url: "http://h/",
                             httpVersion: "1.1", timings: .init(), request: HTTPRequest(url: "http://h/"),
                             connectionsOpened: 0, redirects: 0)
        XCTAssertEqual(r.headers["content-type"], "text/plain")
        XCTAssertEqual(r.headers["ETag"], "\"x\"")
        XCTAssertEqual(r.headers.count, 2, "read twice, parsed once: the same fields")
    }
}
