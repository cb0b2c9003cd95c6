import Foundation
import XCTest

/// A variable scripts/test exports for the servers it starts (LUNET_HTTPBIN, LUNET_NGINX, …);
/// a failure, and `fallback`, when the tests run without them.
func testServerVariable(_ name: String, fallback: String) -> String {
    guard let value = ProcessInfo.processInfo.environment[name] else {
        XCTFail("\(name) is not set: run the tests with scripts/test")
        return fallback
    }
    return value
}

/// httpbin's base URL; an address nothing listens on when the servers are not there.
func httpbinURL() -> String { testServerVariable("LUNET_HTTPBIN", fallback: "http://127.0.0.1:1") }

/// nginx's base URL (static files from LUNET_NGINX_WWW, an access log at LUNET_NGINX_LOG).
func nginxURL() -> String { testServerVariable("LUNET_NGINX", fallback: "http://127.0.0.1:1") }
