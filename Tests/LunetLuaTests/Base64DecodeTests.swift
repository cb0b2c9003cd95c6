import XCTest
@testable import LunetLua
import LunetCore

/// The host's base64 decoder (its embedded-Lua loader reads lua/ files stored as base64) undoes
/// the core's encoder.
final class Base64DecodeTests: XCTestCase {
    func testDecodingUndoesEncoding() {
        for text in ["", "a", "ab", "abc", "user:pass", "\u{0}\u{ff}binary"] {
            let bytes = Array(text.utf8)
            let encoded = Base64.encode(bytes)
            XCTAssertEqual(encoded.utf8.withContiguousStorageIfAvailable { Base64.decode($0) }, bytes, text)
        }
    }
}
