import CLunetCurl
import XCTest
@testable import LunetCore

/// A failed transfer's message is lunet's words first, libcurl's text (which changes between
/// libcurl versions) only after them as a detail.
final class CurlErrorWordsTests: XCTestCase {
    func testTheMessageStartsWithLunetsWordsAndCarriesLibcurlsTextAsADetail() {
        XCTAssertEqual(CurlErrorWords.message(for: CURLE_PARTIAL_FILE, libcurlText: "end of response with 90 bytes missing"),
                       "the connection closed before the whole body arrived (libcurl: end of response with 90 bytes missing)")
        XCTAssertEqual(CurlErrorWords.message(for: CURLE_COULDNT_CONNECT, libcurlText: nil), "the connection could not be made")
        XCTAssertEqual(CurlErrorWords.message(for: CURLE_COULDNT_CONNECT, libcurlText: ""), "the connection could not be made")
    }

    func testEveryCodeHasWordsOfItsOwnNotLibcurls() {
        // libcurl 8's CURLE_TOO_LARGE (a header over 100 KB) reads as 7.88's CURLE_OUT_OF_MEMORY did.
        XCTAssertEqual(CurlErrorWords.words(for: CURLcode(rawValue: 100)), CurlErrorWords.words(for: CURLE_OUT_OF_MEMORY))
        for raw in UInt32(1)...UInt32(101) {
            let words = CurlErrorWords.words(for: CURLcode(rawValue: raw))
            XCTAssertFalse(words.isEmpty, "code \(raw)")
            XCTAssertNotEqual(words, String(cString: curl_easy_strerror_for_test(raw)), "code \(raw) has lunet's words")
        }
    }
}

/// libcurl's own text for a code, to compare with.
private func curl_easy_strerror_for_test(_ raw: UInt32) -> UnsafePointer<CChar> {
    CurlGlobal.initialize()
    return lunet_curl_easy_strerror(CURLcode(rawValue: raw))
}

/// libcurl's faults that lunet works around only on the versions that have them.
final class CurlQuirksTests: XCTestCase {
    func testEachWorkaroundAppliesToTheVersionsWithTheFaultOnly() {
        XCTAssertTrue(CurlQuirks.h2cReuseBroken(0x075801))    // 7.88.1, Debian 12
        XCTAssertFalse(CurlQuirks.h2cReuseBroken(0x080000))   // fixed in 8.0.0
        XCTAssertFalse(CurlQuirks.h2cReuseBroken(0x080E01))   // 8.14.1, bookworm-backports
        XCTAssertFalse(CurlQuirks.h2cReuseBroken(0), "a libcurl that cannot say")
        XCTAssertFalse(CurlQuirks.streamResetWaits(0x075700))  // 7.87.0 sent it at once
        XCTAssertTrue(CurlQuirks.streamResetWaits(0x075801))
        XCTAssertTrue(CurlQuirks.streamResetWaits(0x080E01))   // 8.14.1 still holds it back
        XCTAssertFalse(CurlQuirks.streamResetWaits(0x080F00))  // fixed in 8.15.0
    }

    func testTheLoadedLibcurlSaysWhatItIs() throws {
        let info = try LibcurlInfo.loaded().get()
        XCTAssertEqual(info.number >> 16, UInt32(info.version.split(separator: ".").first.flatMap { UInt32($0) } ?? 99))
        XCTAssertTrue(info.line.hasPrefix("libcurl/\(info.version)"), info.line)
        XCTAssertTrue(["OpenSSL", "GnuTLS"].contains(info.flavour), info.tls)
        XCTAssertTrue(info.path.contains("libcurl"), info.path)
        XCTAssertTrue(info.http2, "Debian's libcurls have HTTP/2")
        XCTAssertTrue(info.summary.contains("libcurl \(info.version) (\(info.tls)) from \(info.path)"), info.summary)
    }
}
