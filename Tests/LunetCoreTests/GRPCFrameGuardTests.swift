import XCTest
@testable import LunetCore

/// gRPC's length prefixes read as a body arrives, in pieces of any size.
final class GRPCFrameGuardTests: XCTestCase {
    private func frame(_ length: UInt32, body: Int? = nil) -> [UInt8] {
        [0, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            + [UInt8](repeating: 7, count: body ?? Int(length))
    }

    private func feed(_ bytes: [UInt8], max: Int, piece: Int) -> GRPCFrameGuard {
        var g = GRPCFrameGuard(max: max)
        var at = 0
        while at < bytes.count {
            let n = Swift.min(piece, bytes.count - at)
            _ = bytes[at..<at + n].withUnsafeBytes { g.feed($0) }
            at += n
        }
        return g
    }

    func testMessagesWithinTheLimitPassInPiecesOfAnySize() {
        let body = frame(3) + frame(0) + frame(100) + frame(7)
        for piece in [1, 2, 5, 6, 64, body.count] {
            XCTAssertNil(feed(body, max: 100, piece: piece).announced, "pieces of \(piece)")
        }
    }

    func testAPrefixOverTheLimitIsSeenAsSoonAsItsFiveBytesCome() {
        let body = frame(3) + frame(0x8000_0000, body: 10)
        for piece in [1, 3, 8, body.count] {
            XCTAssertEqual(feed(body, max: 4 * 1024 * 1024, piece: piece).announced, 0x8000_0000, "pieces of \(piece)")
        }
        var g = GRPCFrameGuard(max: 10)
        XCTAssertFalse(frame(11, body: 0).withUnsafeBytes { g.feed($0) })
        XCTAssertFalse([UInt8(1)].withUnsafeBytes { g.feed($0) }, "and stays refused")
    }
}
