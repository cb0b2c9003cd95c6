import Foundation
import XCTest

/// httpbin's base URL from the servers scripts/test starts (LUNET_HTTPBIN); a failure, and an
/// address nothing listens on, when the tests run without them.
func httpbinURL() -> String {
    guard let url = ProcessInfo.processInfo.environment["LUNET_HTTPBIN"] else {
        XCTFail("LUNET_HTTPBIN is not set: run the tests with scripts/test")
        return "http://127.0.0.1:1"
    }
    return url
}
