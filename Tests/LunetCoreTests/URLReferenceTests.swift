import XCTest
@testable import LunetCore

/// RFC 3986 §5.4: every example of reference resolution, normal and abnormal.
final class URLReferenceTests: XCTestCase {
    let base = URLReference(parsing: "http://a/b/c/d;p?q")

    func testNormalExamples() {
        let cases: [(String, String)] = [
            ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"),
            (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"),
            ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"),
            ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"),
            ("../../g", "http://a/g"),
        ]
        for (reference, expected) in cases {
            XCTAssertEqual(base.resolving(reference).string, expected, "resolving \(reference)")
        }
    }

    func testAbnormalExamples() {
        let cases: [(String, String)] = [
            ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"),
            ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."),
            ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"),
            ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
            ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"), ("g?y/../x", "http://a/b/c/g?y/../x"),
            ("g#s/./x", "http://a/b/c/g#s/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"), ("http:g", "http:g"),
        ]
        for (reference, expected) in cases {
            XCTAssertEqual(base.resolving(reference).string, expected, "resolving \(reference)")
        }
    }

    func testParsingSplitsTheFiveParts() {
        let u = URLReference(parsing: "https://user@host:8080/p/a?x=1#frag")
        XCTAssertEqual(u.scheme, "https")
        XCTAssertEqual(u.authority, "user@host:8080")
        XCTAssertEqual(u.path, "/p/a")
        XCTAssertEqual(u.query, "x=1")
        XCTAssertEqual(u.fragment, "frag")
    }

    func testBaseURLWithAndWithoutTrailingSlash() {
        XCTAssertEqual(URLReference(parsing: "https://api.example.com/v1/").resolving("users/1").string, "https://api.example.com/v1/users/1")
        // Without the slash, "v1" is the last segment and is replaced, as RFC 3986 says.
        XCTAssertEqual(URLReference(parsing: "https://api.example.com/v1").resolving("users/1").string, "https://api.example.com/users/1")
    }
}
