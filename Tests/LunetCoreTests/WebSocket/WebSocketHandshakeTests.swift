import XCTest
@testable import LunetCore

/// The opening handshake (RFC 6455 §4.1) and the SHA-1 it needs.
final class WebSocketHandshakeTests: XCTestCase {
    func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

    func testSHA1KnownVectors() {
        // FIPS 180 examples.
        XCTAssertEqual(hex(SHA1.digest([])), "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        XCTAssertEqual(hex(SHA1.digest(Array("abc".utf8))), "a9993e364706816aba3e25717850c26c9cd0d89d")
        XCTAssertEqual(hex(SHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))),
                       "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        XCTAssertEqual(hex(SHA1.digest([UInt8](repeating: 0x61, count: 1000))), "291e9a6c66994949b57ba5e650361e98fc36b1ba")
    }

    func testTheAcceptValueOfRFC6455Section1_3() {
        XCTAssertEqual(WebSocketHandshake.accept(for: "dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    func testTheRequestHead() {
        let hs = WebSocketHandshake(nonce: Array("the sample nonce".utf8), protocols: ["chat", "superchat"])
        XCTAssertEqual(hs.key, "dGhlIHNhbXBsZSBub25jZQ==")
        let head = hs.request(target: "/chat?x=1", host: "127.0.0.1:9001", extra: [("Authorization", "Bearer t")])
        XCTAssertEqual(head, "GET /chat?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9001\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: chat, superchat\r\nAuthorization: Bearer t\r\n\r\n")
    }

    func answer(_ fields: [(String, String)]) -> HTTPHeaders {
        var h = HTTPHeaders()
        for (n, v) in fields { h.add(n, v) }
        return h
    }

    func testTheServersAnswerIsChecked() {
        let hs = WebSocketHandshake(nonce: Array("the sample nonce".utf8), protocols: ["chat"])
        let good: [(String, String)] = [("Upgrade", "WebSocket"), ("Connection", "keep-alive, Upgrade"),
                                        ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")]
        XCTAssertEqual(hs.check(status: 101, headers: answer(good)), .success(nil), "no subprotocol chosen")
        XCTAssertEqual(hs.check(status: 101, headers: answer(good + [("Sec-WebSocket-Protocol", "chat")])), .success("chat"))
        XCTAssertEqual(hs.check(status: 101, headers: answer(good + [("Sec-WebSocket-Protocol", "other")])),
                       .failure(.field("Sec-WebSocket-Protocol", "other")), "a subprotocol nobody offered")
        XCTAssertEqual(hs.check(status: 200, headers: answer(good)), .failure(.status(200)))
        XCTAssertEqual(hs.check(status: 101, headers: answer([good[0], good[1], ("Sec-WebSocket-Accept", "wrong=")])),
                       .failure(.field("Sec-WebSocket-Accept", "wrong=")))
        XCTAssertEqual(hs.check(status: 101, headers: answer([good[1], good[2]])), .failure(.field("Upgrade", nil)))
        XCTAssertEqual(hs.check(status: 101, headers: answer([good[0], ("Connection", "close"), good[2]])),
                       .failure(.field("Connection", "close")))
        XCTAssertEqual(hs.check(status: 101, headers: answer(good + [("Sec-WebSocket-Extensions", "permessage-deflate")])),
                       .failure(.field("Sec-WebSocket-Extensions", "permessage-deflate")), "an extension nobody offered")
    }
}
