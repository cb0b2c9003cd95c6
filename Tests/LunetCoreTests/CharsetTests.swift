import XCTest
@testable import LunetCore

final class CharsetTests: XCTestCase {
    func convert(_ bytes: [UInt8], _ charset: String) -> Result<String, LunetError> {
        bytes.withUnsafeBufferPointer { Charset.toUTF8($0, from: charset).map(\.string) }
    }

    func testDetectionPrefersTheHeaderThenBOMThenMeta() {
        XCTAssertEqual([UInt8]().withUnsafeBufferPointer { Charset.detect(contentType: "text/plain; charset=\"Shift_JIS\"", body: $0) }, "Shift_JIS")
        XCTAssertEqual([0xEF, 0xBB, 0xBF, 0x41].withUnsafeBufferPointer { Charset.detect(contentType: "text/plain", body: $0) }, "utf-8")
        let html = Array("<html><head><meta charset=\"euc-jp\"></head>".utf8)
        XCTAssertEqual(html.withUnsafeBufferPointer { Charset.detect(contentType: "text/html", body: $0) }, "euc-jp")
        XCTAssertEqual(Array("plain".utf8).withUnsafeBufferPointer { Charset.detect(contentType: nil, body: $0) }, "utf-8")
    }

    func testJapaneseAndLatinCharsetsBecomeUTF8() throws {
        // "日本" in Shift_JIS and EUC-JP, "café" in Latin-1.
        XCTAssertEqual(try convert([0x93, 0xFA, 0x96, 0x7B], "shift_jis").get(), "日本")
        XCTAssertEqual(try convert([0xC6, 0xFC, 0xCB, 0xDC], "euc-jp").get(), "日本")
        XCTAssertEqual(try convert([0x63, 0x61, 0x66, 0xE9], "iso-8859-1").get(), "café")
        XCTAssertEqual(try convert([0xEF, 0xBB, 0xBF, 0x41], "utf-8").get(), "A", "a UTF-8 BOM is dropped")
    }

    func testChineseKoreanAndStatefulJapaneseCharsets() throws {
        XCTAssertEqual(try convert([0x1B, 0x24, 0x42, 0x46, 0x7C, 0x4B, 0x5C, 0x1B, 0x28, 0x42], "iso-2022-jp").get(), "日本")
        XCTAssertEqual(try convert([0xD6, 0xD0, 0xCE, 0xC4], "gbk").get(), "中文")
        XCTAssertEqual(try convert([0xA4, 0xA4, 0xA4, 0xE5], "big5").get(), "中文")
        XCTAssertEqual(try convert([0xC7, 0xD1, 0xB1, 0xB9], "euc-kr").get(), "한국")
    }

    func testBadInputNamesTheProblem() {
        guard case .failure(let unknown) = convert([0x41], "no-such-charset") else { return XCTFail("accepted") }
        XCTAssertEqual(unknown.kind, .decode)
        XCTAssertTrue(unknown.message.contains("no-such-charset"))
        guard case .failure(let invalid) = convert([0x41, 0x42, 0xFF, 0x43], "utf-8") else { return XCTFail("accepted") }
        XCTAssertTrue(invalid.message.contains("byte 3"), invalid.message)
        guard case .failure(let sjis) = convert([0x41, 0x81], "shift_jis") else { return XCTFail("accepted") }
        XCTAssertEqual(sjis.kind, .decode)
    }

    func testUTF8Validation() {
        func first(_ b: [UInt8]) -> Int? { b.withUnsafeBufferPointer { Charset.firstInvalidUTF8($0) } }
        XCTAssertNil(first(Array("héllo ✓ 𝄞".utf8)))
        XCTAssertEqual(first([0xC0, 0x80]), 0, "overlong")
        XCTAssertEqual(first([0x41, 0xED, 0xA0, 0x80]), 1, "a surrogate")
        XCTAssertEqual(first([0x41, 0xE2, 0x82]), 1, "cut off")
        XCTAssertEqual(first([0xF4, 0x90, 0x80, 0x80]), 0, "above U+10FFFF")
    }
}
