import XCTest
@testable import LunetCore

/// Frames (RFC 6455 §5): the client's masked encoding and the checks on the server's frames.
final class WebSocketFrameTests: XCTestCase {
    func decode(_ bytes: [UInt8], max: Int = 1 << 20) -> [Result<WebSocketFrame?, WebSocketProtocolError>] {
        var d = WebSocketFrameDecoder(maxPayload: max)
        d.append(bytes)
        var out: [Result<WebSocketFrame?, WebSocketProtocolError>] = []
        while true {
            let r = d.next()
            out.append(r)
            if case .success(nil) = r { break }
            if case .failure = r { break }
        }
        return out
    }

    func testTheMaskedHelloOfRFC6455Section5_7() {
        let frame = WebSocketFrame(opcode: .text, payload: Array("Hello".utf8))
        XCTAssertEqual(frame.encoded(mask: [0x37, 0xfa, 0x21, 0x3d]), [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58])
    }

    func testLengthsUseSevenSixteenAndSixtyFourBits() {
        let mask: [UInt8] = [1, 2, 3, 4]
        XCTAssertEqual(Array(WebSocketFrame(opcode: .binary, payload: .init(repeating: 0, count: 125)).encoded(mask: mask).prefix(2)), [0x82, 0x80 | 125])
        XCTAssertEqual(Array(WebSocketFrame(opcode: .binary, payload: .init(repeating: 0, count: 256)).encoded(mask: mask).prefix(4)), [0x82, 0xFE, 0x01, 0x00])
        XCTAssertEqual(Array(WebSocketFrame(opcode: .binary, payload: .init(repeating: 0, count: 65536)).encoded(mask: mask).prefix(10)),
                       [0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0])
    }

    func testTheServerFramesOfRFC6455Section5_7() {
        XCTAssertEqual(decode([0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]).first, .success(WebSocketFrame(opcode: .text, payload: Array("Hello".utf8))))
        let fragments = decode([0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f])
        XCTAssertEqual(fragments[0], .success(WebSocketFrame(fin: false, opcode: .text, payload: Array("Hel".utf8))))
        XCTAssertEqual(fragments[1], .success(WebSocketFrame(fin: true, opcode: .continuation, payload: Array("lo".utf8))))
        XCTAssertEqual(decode([0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]).first, .success(WebSocketFrame(opcode: .ping, payload: Array("Hello".utf8))))
        let big = decode([0x82, 0x7E, 0x01, 0x00] + [UInt8](repeating: 7, count: 256))
        XCTAssertEqual(big.first, .success(WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: 7, count: 256))))
    }

    func testBytesArrivingOneAtATime() {
        var d = WebSocketFrameDecoder(maxPayload: 1 << 20)
        let bytes: [UInt8] = [0x82, 0x7E, 0x01, 0x00] + (0..<256).map { UInt8($0) }
        for (i, b) in bytes.enumerated() {
            d.append([b])
            let r = d.next()
            if i < bytes.count - 1 { XCTAssertEqual(r, .success(nil), "byte \(i)") } else {
                XCTAssertEqual(r, .success(WebSocketFrame(opcode: .binary, payload: (0..<256).map { UInt8($0) })))
            }
        }
    }

    func failure(_ bytes: [UInt8], max: Int = 1 << 20) -> WebSocketProtocolError? {
        if case .failure(let e)? = decode(bytes, max: max).last { return e }
        return nil
    }

    func testWhatTheRFCForbidsFailsWithTheRightCloseCode() {
        XCTAssertEqual(failure([0xC1, 0x00])?.closeCode, 1002, "RSV1 set without an extension")
        XCTAssertEqual(failure([0x91, 0x00])?.closeCode, 1002, "RSV3 set")
        XCTAssertEqual(failure([0x83, 0x00])?.closeCode, 1002, "reserved data opcode 3")
        XCTAssertEqual(failure([0x8B, 0x00])?.closeCode, 1002, "reserved control opcode 0xB")
        XCTAssertEqual(failure([0x81, 0x85, 1, 2, 3, 4, 0, 0, 0, 0, 0])?.closeCode, 1002, "a masked server frame")
        XCTAssertEqual(failure([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0])?.closeCode, 1002, "a 2^63 length")
        XCTAssertEqual(failure([0x89, 0x7E, 0x00, 0x7E] + [UInt8](repeating: 0, count: 126))?.closeCode, 1002, "a 126-byte ping")
        XCTAssertEqual(failure([0x09, 0x00])?.closeCode, 1002, "a fragmented ping")
        XCTAssertEqual(failure([0x82, 0x7E, 0x01, 0x00], max: 100)?.closeCode, 1009, "a frame over the limit fails before its bytes arrive")
    }
}
