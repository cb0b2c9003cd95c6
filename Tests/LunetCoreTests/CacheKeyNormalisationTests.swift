import XCTest
@testable import LunetCore

/// Finding F2 (docs/reliability.md, "Fuzzing"): a cache key's normalisation must be idempotent,
/// because the cache keys stored URLs again (invalidation after a POST, purge). The basic
/// normalisations are in CacheValuesTests.testKeysNormaliseURLs.
final class CacheKeyNormalisationTests: XCTestCase {
    private func url(_ s: String, file: StaticString = #filePath, line: UInt = #line) -> String? {
        let key = CacheKey(url: s)
        if let key {
            XCTAssertEqual(CacheKey(url: key.url)?.string, key.string, "keying \(s) again", file: file, line: line)
        }
        return key?.url
    }

    func testEncodedDotsNeverBecomeDotSegments() {
        // Decoded, these would be "..", "." and ".." segments: they keep their encodings.
        XCTAssertEqual(url("http://h/%2E%2E/a"), "http://h/%2E%2E/a")
        XCTAssertEqual(url("http://h/%2e/a"), "http://h/%2E/a")
        XCTAssertEqual(url("http://h/x/%2e./a"), "http://h/x/%2E./a")
        // A literal dot segment is still removed; an encoded dot inside a name is still decoded.
        XCTAssertEqual(url("http://h/x/../a%2Eb"), "http://h/a.b")
        XCTAssertEqual(url("http://h/%2E%2E%2E/a"), "http://h/.../a")
        XCTAssertEqual(url("http://h/a?%2E%2E"), "http://h/a?..")          // no segments in a query
    }

    func testAPercentThatStartsNoTripletStaysAndMakesNone() {
        XCTAssertEqual(url("http://h/%%61b"), "http://h/%%61b")             // not "%ab"
        XCTAssertEqual(url("http://h/%6%61"), "http://h/%6%61")             // not "%6a"
        XCTAssertEqual(url("http://h/%%2Dx"), "http://h/%-x")               // "-" is no hex digit
        XCTAssertEqual(url("http://h/%zz%61"), "http://h/%zza")
        XCTAssertEqual(url("http://h/a%"), "http://h/a%")
        XCTAssertEqual(url("http://h/a?b=%%41%41"), "http://h/a?b=%%41A")
        XCTAssertEqual(url("http://h/%e2%82%ac"), "http://h/%E2%82%AC")      // reserved: upper-case hex only
    }

    func testAPathThatStartsWithACombiningMarkKeepsOneSlash() {
        // "/" and U+0301 are one Character; the key looks at bytes.
        XCTAssertEqual(url("http://h/\u{301}a"), "http://h/\u{301}a")
    }

    func testTheFuzzReproducersKeyToThemselves() {
        for s in ["http://h/%2E%2E/a", "http://h/%%61b", "http://h/%2E%2E/%2E/..%2F%2e%2E/x?%%%41%2e",
                  "http://h/%%%%6%61%%2E%2E/%2E%2E%2f.."] {
            XCTAssertNotNil(url(s), s)
        }
    }
}
