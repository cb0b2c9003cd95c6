import XCTest
@testable import LunetCore

/// Frames into messages (RFC 6455 §5.4-5.5, §7.4, §8.1).
final class WebSocketMessageTests: XCTestCase {
    typealias Event = WebSocketMessageAssembler.Event

    func run(_ frames: [WebSocketFrame], max: Int = 1 << 20) -> (events: [Event], error: WebSocketProtocolError?) {
        var a = WebSocketMessageAssembler(maxMessage: max)
        var events: [Event] = []
        for f in frames {
            switch a.receive(f) {
            case .success(let e?): events.append(e)
            case .success(nil): break
            case .failure(let e): return (events, e)
            }
        }
        return (events, nil)
    }

    func f(_ op: WebSocketOpcode, _ s: String, fin: Bool = true) -> WebSocketFrame { WebSocketFrame(fin: fin, opcode: op, payload: Array(s.utf8)) }

    func testFragmentsWithAPingBetweenThem() {
        let r = run([f(.text, "Hel", fin: false), f(.ping, "p"), f(.continuation, "l", fin: false), f(.continuation, "o")])
        XCTAssertNil(r.error)
        XCTAssertEqual(r.events, [.ping(Array("p".utf8)), .text("Hello")])
    }

    func testACharacterSplitAcrossFragmentsIsStillValidText() {
        let euro = Array("€".utf8)   // e2 82 ac
        let r = run([WebSocketFrame(fin: false, opcode: .text, payload: [euro[0]]), WebSocketFrame(opcode: .continuation, payload: [euro[1], euro[2]])])
        XCTAssertEqual(r.events, [.text("€")])
    }

    func testFragmentationMistakes() {
        XCTAssertEqual(run([f(.continuation, "x")]).error?.closeCode, 1002, "a continuation with nothing to continue")
        XCTAssertEqual(run([f(.text, "a", fin: false), f(.binary, "b")]).error?.closeCode, 1002, "a new message inside a fragmented one")
    }

    func testTextMustBeUTF8() {
        XCTAssertEqual(run([WebSocketFrame(opcode: .text, payload: [0xce, 0xba, 0xe1, 0xbd, 0xb9, 0xcf, 0x83, 0xed, 0xa0, 0x80])]).error?.closeCode, 1007, "a surrogate")
        XCTAssertEqual(run([WebSocketFrame(opcode: .text, payload: [0xc0, 0xaf])]).error?.closeCode, 1007, "an overlong encoding")
        XCTAssertEqual(run([WebSocketFrame(opcode: .binary, payload: [0xc0, 0xaf])]).events, [.binary([0xc0, 0xaf])], "binary is not checked")
    }

    func testTheMessageLimitCountsEveryFragment() {
        XCTAssertEqual(run([f(.text, "12345", fin: false), f(.continuation, "67890")], max: 8).error?.closeCode, 1009)
        XCTAssertEqual(run([f(.binary, "123456789")], max: 8).error?.closeCode, 1009)
        XCTAssertNil(run([f(.binary, "12345678")], max: 8).error)
    }

    func testCloseFrames() {
        XCTAssertEqual(run([WebSocketFrame(opcode: .close, payload: [])]).events, [.close(code: nil, reason: "")])
        XCTAssertEqual(run([WebSocketFrame(opcode: .close, payload: [0x03, 0xE8] + Array("bye".utf8))]).events, [.close(code: 1000, reason: "bye")])
        XCTAssertEqual(run([WebSocketFrame(opcode: .close, payload: [0x0F, 0xA0])]).events, [.close(code: 4000, reason: "")])
        XCTAssertEqual(run([WebSocketFrame(opcode: .close, payload: [0x03])]).error?.closeCode, 1002, "a one-byte payload")
        for bad: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000] {
            XCTAssertEqual(run([WebSocketFrame(opcode: .close, payload: [UInt8(bad >> 8), UInt8(bad & 0xFF)])]).error?.closeCode, 1002, "code \(bad)")
        }
        XCTAssertEqual(run([WebSocketFrame(opcode: .close, payload: [0x03, 0xE8, 0xff])]).error?.closeCode, 1007, "a reason that is not UTF-8")
        XCTAssertEqual(run([WebSocketFrame(opcode: .close, payload: []), f(.text, "late")]).error?.closeCode, 1002, "a frame after close")
    }

    func testTheClientsClosePayloadFitsAControlFrameAndStaysUTF8() {
        XCTAssertEqual(WebSocketMessageAssembler.closePayload(code: 1000, reason: "ok"), [0x03, 0xE8, 0x6f, 0x6b])
        let long = String(repeating: "é", count: 100)   // 200 bytes
        let p = WebSocketMessageAssembler.closePayload(code: 1001, reason: long)
        XCTAssertLessThanOrEqual(p.count, 125)
        XCTAssertNotNil(String(validating: p[2...], as: UTF8.self), "cut at a character boundary")
    }
}
