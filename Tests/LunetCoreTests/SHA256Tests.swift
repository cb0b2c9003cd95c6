import XCTest
@testable import LunetCore

final class SHA256Tests: XCTestCase {
    func digest(_ s: String) -> String { var h = SHA256(); h.update(Array(s.utf8)); return h.finalize() }

    func testStandardVectors() {
        XCTAssertEqual(digest(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(digest("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(digest(String(repeating: "a", count: 1_000_000)),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testStreamingInPiecesGivesTheSameDigest() {
        let text = Array(String(repeating: "lunet streams ", count: 1000).utf8)
        var whole = SHA256()
        whole.update(text)
        var pieces = SHA256()
        var i = 0
        for size in [1, 63, 64, 65, 7, 1000, 13] where i < text.count {
            let end = min(text.count, i + size)
            pieces.update(Array(text[i..<end]))
            i = end
        }
        pieces.update(Array(text[i...]))
        XCTAssertEqual(whole.finalize(), pieces.finalize())
    }
}
