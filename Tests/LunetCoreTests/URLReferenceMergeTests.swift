import XCTest
@testable import LunetCore

/// Finding F5 (docs/reliability.md, "Fuzzing"): resolution must find every "/" of a path, also
/// one that a combining mark follows ("/" and U+0301 are one Character). The RFC 3986 §5.4
/// examples are in URLReferenceTests.
final class URLReferenceMergeTests: XCTestCase {
    func testMergeKeepsTheHostWhenTheLastSlashCarriesACombiningMark() {
        let target = URLReference(parsing: "http://example.com/\u{301}x").resolving(".attacker.net/p")
        XCTAssertEqual(target.authority, "example.com")
        XCTAssertEqual(target.path, "/.attacker.net/p")
        XCTAssertEqual(target.string, "http://example.com/.attacker.net/p")

        // The end-to-end reproducer's case: the port-like reference stays in the path.
        let port = URLReference(parsing: "http://127.0.0.1/\u{301}dir").resolving(":8080/hit")
        XCTAssertEqual(port.string, "http://127.0.0.1/:8080/hit")
    }

    func testMergeCutsAfterTheLastSlashByte() {
        XCTAssertEqual(URLReference(parsing: "http://a/b/\u{301}").resolving("g").string, "http://a/b/g")
        XCTAssertEqual(URLReference(parsing: "http://a/b\u{301}/c").resolving("g").string, "http://a/b\u{301}/g")
    }

    func testAReferenceStartingWithSlashAndACombiningMarkIsAnAbsolutePath() {
        XCTAssertEqual(URLReference(parsing: "http://a/b/c").resolving("/\u{301}g").string, "http://a/\u{301}g")
    }

    func testDotSegmentsAreFoundByBytes() {
        XCTAssertEqual(URLReference.removeDotSegments("/a/\u{301}/../b"), "/a/b")
        XCTAssertEqual(URLReference.removeDotSegments("/a/.\u{301}/b"), "/a/.\u{301}/b")   // ".́" is a name
        XCTAssertEqual(URLReference.removeDotSegments("/a/b/.."), "/a/")
        XCTAssertEqual(URLReference.removeDotSegments("/a/b/."), "/a/b/")
        XCTAssertEqual(URLReference.removeDotSegments("/\u{301}/.."), "/")
    }
}
