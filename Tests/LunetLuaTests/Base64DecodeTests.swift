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

    func testEveryByteValueAtEveryPositionOfAGroupComesBack() {
        for lead in 0..<3 {
            let bytes = [UInt8](repeating: 7, count: lead) + (0...255).map { UInt8($0) }
            let encoded = Base64.encode(bytes)
            XCTAssertEqual(encoded.utf8.withContiguousStorageIfAvailable { Base64.decode($0) }, bytes, "after \(lead) bytes")
        }
    }

    func testDecodingStopsAtTheFirstCharacterOutsideTheAlphabet() {
        // "QUJD" is "ABC"; what follows a stranger (a space, a byte above ASCII, '=') is not read.
        for tail: [UInt8] in [[0x20], [0xC3, 0xA9], [0x3D], [0x80], [0xFF], [0x7F]] {
            let input: [UInt8] = Array("QUJD".utf8) + tail + Array("QUJD".utf8)
            XCTAssertEqual(input.withUnsafeBufferPointer { Base64.decode($0) }, Array("ABC".utf8), "\(tail)")
        }
    }
}
