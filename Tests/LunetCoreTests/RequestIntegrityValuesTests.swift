import XCTest
@testable import LunetCore

/// Issue 33's pure values, without the network: what a header may hold (HeaderFieldRules),
/// which fields are credentials (CredentialFields), which jar cookies a URL gets (CookieMatch),
/// and what a redirect does (RedirectPolicy).
final class RequestIntegrityValuesTests: XCTestCase {
    // MARK: HeaderFieldRules

    func testValuesWithLineBreaksOrNulAreRefusedOthersPass() {
        XCTAssertNil(HeaderFieldRules.problem(name: "X-A", value: "plain value: with colon; tab\there, é"))
        XCTAssertNil(HeaderFieldRules.problem(name: "X-A", value: ""))
        for bad in ["a\r\nX-Inj: 1", "a\nb", "a\rb", "a\0b"] {
            let e = HeaderFieldRules.problem(name: "X-A", value: bad)
            XCTAssertEqual(e?.kind, .argument, bad.debugDescription)
            XCTAssertTrue(e?.message.contains("'X-A'") == true, e?.message ?? "")
        }
    }

    func testNamesMustBeTokensAndAreQuotedWithoutControlBytes() {
        XCTAssertTrue(HeaderFieldRules.isToken("X-Custom_1.a!#$%&'*+^`|~"))
        for bad in ["", "X A", "X:A", "X\r\nY", "X\u{0}", "é", "X\"A"] {
            let e = HeaderFieldRules.problem(name: bad, value: "v")
            XCTAssertNotNil(e, bad.debugDescription)
            XCTAssertFalse(e!.message.contains("\r") || e!.message.contains("\n") || e!.message.contains("\u{0}"), e!.message)
        }
        XCTAssertEqual(HeaderFieldRules.quoted("a\r\nb\u{1B}"), "'a\\r\\nb\\x1B'")
    }

    func testABlockOverOneMegabyteIsRefusedByItsLargestField() {
        var h = HTTPHeaders()
        h.add("X-Small", "1")
        h.add("X-Big", String(repeating: "t", count: HeaderFieldRules.maxHeaderBytes))
        let e = HeaderFieldRules.problem(in: h)
        XCTAssertTrue(e?.message.contains("'X-Big'") == true, e?.message ?? "nil")
        XCTAssertNil(HeaderFieldRules.problem(in: HTTPHeaders([("X-A", String(repeating: "t", count: 1000))])))
        XCTAssertNotNil(HeaderFieldRules.problem(in: HTTPHeaders(), removed: ["User-Agent\r\nX: 1"]))
    }

    // MARK: CredentialFields

    func testCredentialNamesByWhatTheyContain() {
        for name in ["Authorization", "Cookie", "X-Api-Key", "api_key", "X-Auth-Token", "Private-Token", "X-Amz-Security-Token",
                     "Proxy-Authorization", "X-CSRF-Token", "session_id", "X-Client-Secret", "key", "JWT",
                     // Issue 46, item 14: the names real APIs give their keys.
                     "Ocp-Apim-Subscription-Key", "x-functions-key", "X-Auth-Key", "X-Storage-Pass", "sig",
                     "x-ms-cosmos-master-key", "X-License-Key"] {
            XCTAssertTrue(CredentialFields.isCredential(name), name)
        }
        for name in ["User-Agent", "Accept", "Content-Type", "X-Request-Id", "X-Amz-Date", "Keyboard", "X-Tenant-Key",
                     "", "---", "k-e-y-s", "grpc-timeout", "te", "signal", "design", "Idempotency-Key"] {
            XCTAssertFalse(CredentialFields.isCredential(name), name)
        }
        // Separators and case do not hide one, however long the name.
        for name in ["K.E.Y", "S_I_D", "x-" + String(repeating: "a", count: 5000) + "-Pass-Word", "Ä-Api-Token-Ü"] {
            XCTAssertTrue(CredentialFields.isCredential(name), name)
        }
    }

    func testMaterialHoldsEveryCredentialAndTheDeclaredFieldInAFixedOrder() {
        var a = HTTPRequest(url: "http://h/")
        a.headers = HTTPHeaders([("X-Api-Key", "k"), ("Accept", "*/*"), ("Cookie", "a=1"), ("X-Tenant-Key", "t")])
        a.options.secretHeader = "X-Tenant-Key"
        var b = a
        b.headers = HTTPHeaders([("Cookie", "a=1"), ("X-Tenant-Key", "t"), ("X-Api-Key", "k"), ("Accept", "text/html")])
        XCTAssertEqual(CredentialFields.material(a), CredentialFields.material(b), "order and other fields do not matter")
        XCTAssertEqual(CredentialFields.material(a), "cookie:a=1\nx-api-key:k\nx-tenant-key:t")
        b.headers.set("Cookie", "a=2")
        XCTAssertNotEqual(CredentialFields.material(a), CredentialFields.material(b))
        var c = HTTPRequest(url: "http://h/")
        XCTAssertEqual(CredentialFields.material(c), "")
        c.jarCookies = "s=1"
        XCTAssertEqual(CredentialFields.material(c), "jar-cookie:s=1")
    }

    // MARK: CookieMatch

    func testJarCookiesByDomainPathSecureAndExpiry() {
        let lines = [
            "127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\ts1",
            ".example.com\tTRUE\t/\tFALSE\t0\twide\tw",
            "example.com\tFALSE\t/app\tFALSE\t0\tapp\ta",
            "#HttpOnly_example.com\tFALSE\t/\tTRUE\t0\tsecure\tx",
            "example.com\tFALSE\t/\tFALSE\t1000\told\to",
            "# a comment",
        ]
        XCTAssertEqual(CookieMatch.header(lines: lines, url: "http://127.0.0.1:8080/x", now: 2000), "session=s1")
        XCTAssertEqual(CookieMatch.header(lines: lines, url: "http://example.com/", now: 2000), "wide=w")
        XCTAssertEqual(CookieMatch.header(lines: lines, url: "https://example.com/app/x", now: 2000), "app=a; secure=x; wide=w")
        XCTAssertEqual(CookieMatch.header(lines: lines, url: "http://example.com/apple", now: 2000), "wide=w", "/app does not match /apple")
        XCTAssertEqual(CookieMatch.header(lines: lines, url: "http://a.example.com/", now: 2000), "wide=w")
        XCTAssertEqual(CookieMatch.header(lines: lines, url: "http://example.com/", now: 500), "old=o; wide=w", "not yet expired")
        XCTAssertEqual(CookieMatch.header(lines: lines, url: "http://other.org/", now: 0), "")
    }

    // MARK: RedirectPolicy

    private func step(_ d: RedirectPolicy.Decision) -> RedirectPolicy.Step? {
        if case .follow(let s) = d { return s }
        return nil
    }

    func testWhichResponsesAreFollowedAndHow() {
        let from = "http://a.test:8080/one/two"
        XCTAssertEqual(step(RedirectPolicy.decide(status: 302, location: "three", url: from, method: "GET", hops: 0, maxRedirects: 10)),
                       .init(url: "http://a.test:8080/one/three", method: "GET", keepsBody: true, crossOrigin: false))
        XCTAssertEqual(step(RedirectPolicy.decide(status: 302, location: " http://b.test:8080/x#frag ", url: from, method: "POST", hops: 0, maxRedirects: 10)),
                       .init(url: "http://b.test:8080/x", method: "GET", keepsBody: false, crossOrigin: true))
        XCTAssertEqual(step(RedirectPolicy.decide(status: 303, location: "/x", url: from, method: "PUT", hops: 0, maxRedirects: 10))?.method, "GET")
        XCTAssertEqual(step(RedirectPolicy.decide(status: 303, location: "/x", url: from, method: "HEAD", hops: 0, maxRedirects: 10))?.method, "HEAD")
        XCTAssertEqual(step(RedirectPolicy.decide(status: 307, location: "/x", url: from, method: "POST", hops: 0, maxRedirects: 10))?.keepsBody, true)
        XCTAssertEqual(step(RedirectPolicy.decide(status: 301, location: "/x", url: from, method: "PUT", hops: 0, maxRedirects: 10))?.method, "PUT")
        // Port, scheme and host each make another origin; the default port does not.
        XCTAssertEqual(step(RedirectPolicy.decide(status: 302, location: "http://a.test:8081/", url: from, method: "GET", hops: 0, maxRedirects: 10))?.crossOrigin, true)
        XCTAssertEqual(step(RedirectPolicy.decide(status: 302, location: "https://a.test:8080/", url: from, method: "GET", hops: 0, maxRedirects: 10))?.crossOrigin, true)
        XCTAssertEqual(step(RedirectPolicy.decide(status: 302, location: "HTTP://A.TEST:80/", url: "http://a.test/", method: "GET", hops: 0, maxRedirects: 10))?.crossOrigin, false)
        for status in [200, 300, 304, 305, 404] {
            guard case .deliver = RedirectPolicy.decide(status: status, location: "/x", url: from, method: "GET", hops: 0, maxRedirects: 10) else {
                return XCTFail("\(status) is an answer")
            }
        }
        guard case .deliver = RedirectPolicy.decide(status: 302, location: nil, url: from, method: "GET", hops: 0, maxRedirects: 10) else {
            return XCTFail("no Location: the answer")
        }
    }

    func testLimitsAndSchemesFail() {
        guard case .fail(let e) = RedirectPolicy.decide(status: 302, location: "/x", url: "http://a/", method: "GET", hops: 3, maxRedirects: 3) else {
            return XCTFail("the fourth redirect past max_redirects = 3")
        }
        XCTAssertEqual(e.kind, .redirects)
        guard case .follow = RedirectPolicy.decide(status: 302, location: "/x", url: "http://a/", method: "GET", hops: 99, maxRedirects: -1) else {
            return XCTFail("-1: no limit")
        }
        guard case .fail(let f) = RedirectPolicy.decide(status: 302, location: "file:///etc/passwd", url: "http://a/", method: "GET", hops: 0, maxRedirects: 10) else {
            return XCTFail("file: is not followed")
        }
        XCTAssertEqual(f.kind, .redirects)
    }

    func testTheNextRequestLosesCredentialsAcrossOriginsAndTheBodyWithTheMethod() {
        var r = HTTPRequest(method: "POST", url: "http://a/", body: .bytes(ByteBuffer(copying: [UInt8(0x78)], count: 1)))
        r.headers = HTTPHeaders([("Authorization", "Bearer t"), ("Cookie", "c=1"), ("X-Api-Key", "k"), ("X-Tenant", "t"),
                                 ("Proxy-Authorization", "Basic p"), ("Content-Type", "text/plain"), ("X-Keep", "1")])
        r.options.secretHeader = "X-Tenant"
        r.options.curlAuth = CurlAuth(.digest, user: "u", password: "p")
        let across = RedirectPolicy.request(after: r, .init(url: "http://b/", method: "GET", keepsBody: false, crossOrigin: true))
        XCTAssertEqual(across.headers.fields.map { $0.name }, ["Proxy-Authorization", "X-Keep"])
        XCTAssertNil(across.options.curlAuth)
        XCTAssertEqual(across.method, "GET")
        guard case .none = across.body else { return XCTFail("the body goes with the POST") }
        let within = RedirectPolicy.request(after: r, .init(url: "http://a/x", method: "POST", keepsBody: true, crossOrigin: false))
        XCTAssertEqual(within.headers.count, r.headers.count, "the same origin keeps every field")
        XCTAssertNotNil(within.options.curlAuth)
        guard case .bytes = within.body else { return XCTFail("307/308 keep the body") }
    }
}
