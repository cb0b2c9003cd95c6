import XCTest
@testable import LunetLua

/// The host's decoder of the text lunet-luac stores lua/ files as: seven bytes of a file in eight
/// bytes below 0x80, seven bits each, low bits first. (HostLifecycleTests decodes every embedded
/// file, as lunet-luac encoded it, and compares it with lua/ on disk.)
final class EmbeddedTextTests: XCTestCase {
    /// Seven-in-eight, written out bit by bit (the specification, not lunet-luac's loop).
    private func text(_ bytes: [UInt8]) -> [UInt8] {
        var bits: [UInt8] = []
        for b in bytes { for k in 0..<8 { bits.append(b >> k & 1) } }
        while bits.count % 56 != 0 { bits.append(0) }
        return stride(from: 0, to: bits.count, by: 7).map { at in
            (0..<7).reduce(UInt8(0)) { $0 | bits[at + $1] << $1 }
        }
    }

    private func decode(_ text: [UInt8], count: Int) -> [UInt8] {
        text.withUnsafeBufferPointer { EmbeddedText.decode($0, count: count) }
    }

    func testEveryByteValueComesBack() {
        let bytes = (0...255).map { UInt8($0) } + (0...255).reversed().map { UInt8($0) }
        let t = text(bytes)
        XCTAssertEqual(t.count, (512 + 6) / 7 * 8, "eight bytes of text for every seven")
        XCTAssertTrue(t.allSatisfy { $0 < 0x80 }, "one UTF-8 byte each in a string literal")
        XCTAssertEqual(decode(t, count: bytes.count), bytes)
    }

    func testEverySizeAroundAGroupComesBackWithoutThePadding() {
        for n in 0...23 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: 0xF1 &* ($0 + 3)) }
            XCTAssertEqual(decode(text(bytes), count: n), bytes, "\(n) bytes")
        }
    }

    func testAllOnesAndAllZerosKeepTheirBits() {
        XCTAssertEqual(text([UInt8](repeating: 0xFF, count: 7)), [UInt8](repeating: 0x7F, count: 8))
        XCTAssertEqual(decode([UInt8](repeating: 0x7F, count: 8), count: 7), [UInt8](repeating: 0xFF, count: 7))
        XCTAssertEqual(decode([UInt8](repeating: 0, count: 16), count: 14), [UInt8](repeating: 0, count: 14))
    }
}
