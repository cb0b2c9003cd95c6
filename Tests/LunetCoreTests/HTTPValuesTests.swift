import XCTest
@testable import LunetCore
import CLunetCurl

final class HTTPValuesTests: XCTestCase {
    func testHeadersCompareNamesWithoutCaseAndKeepOrder() {
        var h = HTTPHeaders([("Content-Type", "a"), ("Set-Cookie", "x=1"), ("set-cookie", "y=2")])
        XCTAssertEqual(h["content-type"], "a")
        XCTAssertEqual(h.all("SET-COOKIE"), ["x=1", "y=2"])
        h.set("CONTENT-TYPE", "b")
        XCTAssertEqual(h["Content-Type"], "b")
        XCTAssertEqual(h.count, 3)
        XCTAssertFalse("Content-Type".caseInsensitiveEquals("Content_Type"))
        // Only ASCII letters fold: '@' (0x40) and '`' (0x60) differ by the case bit and are not one.
        XCTAssertFalse("a@b".caseInsensitiveEquals("a`b"))
        XCTAssertFalse("[".caseInsensitiveEquals("{"))
        XCTAssertTrue("".caseInsensitiveEquals(""))
        XCTAssertFalse("ab".caseInsensitiveEquals("abc"))
        XCTAssertTrue("X-É-1".caseInsensitiveEquals("x-É-1"), "bytes that are equal are equal")
        XCTAssertFalse("É".caseInsensitiveEquals("é"), "no folding past ASCII")
    }

    func testMergingKeepsRepeatsAndTheSessionsOthersInOrder() {
        let session = HTTPHeaders([("A", "1"), ("Cookie", "s"), ("B", "2"), ("cookie", "t")])
        let request = HTTPHeaders([("COOKIE", "r1"), ("Cookie", "r2")])
        let merged = session.merging(request)
        XCTAssertEqual(merged.fields.map { "\($0.name)=\($0.value)" }, ["A=1", "B=2", "COOKIE=r1", "Cookie=r2"])
        XCTAssertEqual(HTTPHeaders().merging(request).fields.map(\.value), ["r1", "r2"], "over no session fields")
        XCTAssertEqual(session.merging(HTTPHeaders()).count, 4, "no request fields")
    }

    func testMergingReplacesByName() {
        let session = HTTPHeaders([("Accept", "*/*"), ("X-App", "1")])
        let request = HTTPHeaders([("accept", "application/json")])
        let merged = session.merging(request)
        XCTAssertEqual(merged.fields.map(\.name), ["X-App", "accept"])
        XCTAssertEqual(merged["Accept"], "application/json")
    }

    func testOptionsResolveOverDefaults() {
        var request = TransferOptions()
        request.timeout = 2
        let resolved = request.resolved(over: TransferOptions.standard)
        XCTAssertEqual(resolved.timeout, 2)
        XCTAssertEqual(resolved.maxRedirects, 10)
        XCTAssertEqual(resolved.maxBody, 100 * 1024 * 1024)
    }

    /// The options kept behind one reference resolve field by field like the others, and a copy
    /// changed does not change the original.
    func testRareOptionsResolveFieldByFieldAndCopiesStayApart() {
        var session = TransferOptions()
        session.netrcFile = "/home/a/.netrc"
        session.clientCertificate = "session.pem"
        var request = TransferOptions()
        request.clientCertificate = "request.pem"
        let r = request.resolved(over: session)
        XCTAssertEqual(r.clientCertificate, "request.pem", "the request's own")
        XCTAssertEqual(r.netrcFile, "/home/a/.netrc", "the session's where the request has none")
        var copy = r
        copy.netrcFile = nil
        XCTAssertEqual(r.netrcFile, "/home/a/.netrc", "the original keeps its value")
        XCTAssertNotEqual(copy, r)
        copy.netrcFile = "/home/a/.netrc"
        XCTAssertEqual(copy, r, "equal by value, not by reference")
        var cleared = TransferOptions()
        cleared.clientKey = "k"
        cleared.clientKey = nil
        XCTAssertEqual(cleared, TransferOptions(), "nothing set is equal to the empty options")
    }

    func testCurlCodesMapToKinds() {
        XCTAssertEqual(CurlErrorMapping.kind(of: CURLE_COULDNT_RESOLVE_HOST), .dns)
        XCTAssertEqual(CurlErrorMapping.kind(of: CURLE_COULDNT_CONNECT), .connect)
        XCTAssertEqual(CurlErrorMapping.kind(of: CURLE_OPERATION_TIMEDOUT), .timeout)
        XCTAssertEqual(CurlErrorMapping.kind(of: CURLE_PEER_FAILED_VERIFICATION), .tls)
        XCTAssertEqual(CurlErrorMapping.kind(of: CURLE_TOO_MANY_REDIRECTS), .redirects)
        XCTAssertEqual(CurlErrorMapping.kind(of: CURLE_PARTIAL_FILE), .protocol)
        XCTAssertEqual(CurlErrorMapping.kind(of: CURLE_URL_MALFORMAT), .argument)
    }

    func testBase64() {
        XCTAssertEqual(Base64.encode(Array("user:pass".utf8)), "dXNlcjpwYXNz")
        XCTAssertEqual(Base64.encode(Array("a".utf8)), "YQ==")
        XCTAssertEqual(Base64.encode(Array("ab".utf8)), "YWI=")
        XCTAssertEqual(Base64.encode([]), "")
    }

    func testOnlyPlainAbsoluteURLsSkipResolution() {
        for plain in ["http://h/", "https://h:8443/a/b?c=d", "http://127.0.0.1:8080/small.txt"] {
            XCTAssertTrue(Session.isPlainAbsolute(plain), plain)
        }
        for other in ["http://h", "http://h?x", "http://h/a#f", "http://h/a b", "HTTP://h/", "http:///x", "http://:80/", "ftp://h/", "/x", "users"] {
            XCTAssertFalse(Session.isPlainAbsolute(other), other)
        }
    }

    func testSessionRejectsBadURLsByName() {
        let session = Session(loop: EventLoop())
        for bad in ["http://exa mple.com/", "ftp://x/y", "users/1", "http:///nohost", "javascript:alert(1)"] {
            XCTAssertThrowsError(try session.resolve(bad), bad) { e in
                let error = e as! LunetError
                XCTAssertEqual(error.kind, .argument)
                XCTAssertTrue(error.message.contains(bad), error.message)
            }
        }
        var c = Session.Configuration()
        c.baseURL = "http://h/api/v1/"
        XCTAssertEqual(try Session(loop: EventLoop(), configuration: c).resolve("users?id=1#top"), "http://h/api/v1/users?id=1")
        XCTAssertEqual(try session.resolve("http://h"), "http://h/")
    }
}
