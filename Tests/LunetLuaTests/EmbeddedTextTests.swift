import XCTest
@testable import LunetLua

/// The host's decoder of the text lunet-luac stores lua/ files as: one Unicode scalar per byte,
/// of the same value (U+0000-U+00FF). (HostLifecycleTests decodes every embedded file and
/// compares it with lua/ on disk.)
final class EmbeddedTextTests: XCTestCase {
    /// What the compiler stores for a literal of these scalars: their UTF-8.
    private func text(_ bytes: [UInt8]) -> [UInt8] {
        Array(String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) })).utf8)
    }

    private func decode(_ text: [UInt8]) -> [UInt8] {
        text.withUnsafeBufferPointer { EmbeddedText.decode($0) }
    }

    func testEveryByteValueComesBack() {
        let bytes = (0...255).map { UInt8($0) } + (0...255).reversed().map { UInt8($0) }
        XCTAssertEqual(text(bytes).count, 512 + 256, "two UTF-8 bytes for each value from 0x80")
        XCTAssertEqual(decode(text(bytes)), bytes)
    }

    func testATextCutInsideATwoByteScalarStopsBeforeIt() {
        XCTAssertEqual(decode([0x41, 0xC3]), [0x41])
    }
}
