import XCTest
@testable import LunetCore

/// Which proxy libcurl goes through for a URL, so that an error there can name it (pure).
final class ProxyInEffectTests: XCTestCase {
    func env(_ vars: [String: String]) -> (String) -> String? { { vars[$0] } }

    func testTheOptionWinsAndAnEmptyOneMeansNone() {
        XCTAssertEqual(ProxyInEffect.proxy(for: "http://a.test/", option: "http://p:3128", environment: env(["http_proxy": "http://e:1"])), "http://p:3128")
        XCTAssertNil(ProxyInEffect.proxy(for: "http://a.test/", option: "", environment: env(["http_proxy": "http://e:1"])))
        // no_proxy counts for a proxy given as an option too (libcurl reads it either way).
        XCTAssertNil(ProxyInEffect.proxy(for: "http://127.0.0.1:8080/", option: "http://p:3128", environment: env(["no_proxy": "127.0.0.1"])))
    }

    func testTheEnvironmentBySchemeAsLibcurlReadsIt() {
        let vars = ["http_proxy": "http://h:1", "HTTPS_PROXY": "http://s:2", "ALL_PROXY": "socks5://all:3"]
        XCTAssertEqual(ProxyInEffect.proxy(for: "http://a.test/x", option: nil, environment: env(vars)), "http://h:1")
        XCTAssertEqual(ProxyInEffect.proxy(for: "https://a.test/x", option: nil, environment: env(vars)), "http://s:2")
        XCTAssertEqual(ProxyInEffect.proxy(for: "http://a.test/", option: nil, environment: env(["ALL_PROXY": "socks5://all:3"])), "socks5://all:3")
        // HTTP_PROXY in capitals is never read (CGI programs get it from a request's Proxy: header).
        XCTAssertNil(ProxyInEffect.proxy(for: "http://a.test/", option: nil, environment: env(["HTTP_PROXY": "http://evil:1"])))
        XCTAssertNil(ProxyInEffect.proxy(for: "http://a.test/", option: nil, environment: env([:])))
    }

    func testNoProxyNamesHostsAndDomains() {
        let vars = ["http_proxy": "http://h:1", "no_proxy": "localhost, .internal.test,example.com"]
        for (url, bypassed) in [("http://localhost:8080/", true), ("http://api.internal.test/", true), ("http://internal.test/", true),
                                ("http://example.com/", true), ("http://www.example.com/", true), ("http://badexample.com/", false),
                                ("http://user:pw@example.com:81/", true), ("http://other.test/", false)] {
            XCTAssertEqual(ProxyInEffect.proxy(for: url, option: nil, environment: env(vars)) == nil, bypassed, url)
        }
        XCTAssertNil(ProxyInEffect.proxy(for: "http://any.test/", option: nil, environment: env(["http_proxy": "http://h:1", "NO_PROXY": "*"])))
        XCTAssertTrue(ProxyInEffect.noProxy("::1", names: "[::1]"))
    }

    func testAShownProxyHasNoPassword() {
        XCTAssertEqual(ProxyInEffect.shown("http://user:secret@proxy.test:3128"), "http://user:***@proxy.test:3128")
        XCTAssertEqual(ProxyInEffect.shown("http://proxy.test:3128"), "http://proxy.test:3128")
        XCTAssertEqual(ProxyInEffect.shown("user@proxy.test"), "user@proxy.test")
        XCTAssertEqual(ProxyInEffect.shown("user:pw@proxy.test:3128"), "user:***@proxy.test:3128", "no scheme")
        XCTAssertEqual(ProxyInEffect.shown("socks5h://u:p@q@h:1"), "socks5h://u:***@h:1", "an @ in the password")
    }
}
