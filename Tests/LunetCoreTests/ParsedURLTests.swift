import XCTest
@testable import LunetCore

/// The URL a transfer hands libcurl (ParsedURL): its path is sent as written but for literal
/// "." and ".." segments, whichever libcurl is loaded (libcurl 8 alone would also remove
/// percent-encoded ones).
final class ParsedURLTests: XCTestCase {
    override func setUp() { CurlGlobal.initialize() }

    func testPercentEncodedDotSegmentsAreSentAsWritten() throws {
        let cases = [
            "http://127.0.0.1/api/v1/users/%2E%2E/info", "http://127.0.0.1/a/%2e%2E/b",
            "http://127.0.0.1/a/%2E/b", "http://127.0.0.1/a/.%2E/b?x=/../y",
        ]
        for url in cases {
            let parsed = try XCTUnwrap(ParsedURL(url), url)
            XCTAssertEqual(parsed.normalizedText, url)
        }
    }

    func testLiteralDotSegmentsAreRemovedAsRFC3986Says() throws {
        let cases = [
            ("http://127.0.0.1/a/b/../c", "http://127.0.0.1/a/c"), ("http://127.0.0.1/a/./b", "http://127.0.0.1/a/b"),
            ("http://127.0.0.1/../../x?q=/../", "http://127.0.0.1/x?q=/../"), ("http://127.0.0.1/a/b/..", "http://127.0.0.1/a/"),
            ("127.0.0.1/a/../b", "http://127.0.0.1/b"),
        ]
        for (url, sent) in cases {
            XCTAssertEqual(try XCTUnwrap(ParsedURL(url), url).normalizedText, sent, url)
        }
    }
}
