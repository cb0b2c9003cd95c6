import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// Decoding what is not well-formed XML: messages with line, column and byte; bad UTF-8; limits; truncated and mutated documents.
final class XMLDecodeErrorTests: XMLCodecTestCase {
    func testMalformedDocumentsNamePositions() {
        let cases: [(String, String, Int)] = [
            ("", "empty input (expected an XML document) at line 1, column 1 (byte 1)", 1),
            ("  \n ", "no root element (the document ends before one) at line 2, column 2 (byte 5)", 5),
            ("<!-- only a comment -->", "no root element (the document ends before one) at line 1, column 24 (byte 24)", 24),
            ("hello", "text before the root element (unexpected character 'h') at line 1, column 1 (byte 1)", 1),
            ("<a>\n  <b>\n</a>", "mismatched end tag </a>: expected </b> to close <b> opened on line 2, column 3 at line 3, column 1 (byte 11)", 11),
            ("<a></b>", "mismatched end tag </b>: expected </a> to close <a> opened on line 1, column 1 at line 1, column 4 (byte 4)", 4),
            ("<a></ab>", "mismatched end tag </ab>: expected </a> to close <a> opened on line 1, column 1 at line 1, column 4 (byte 4)", 4),
            ("<ab></a>", "mismatched end tag </a>: expected </ab> to close <ab> opened on line 1, column 1 at line 1, column 5 (byte 5)", 5),
            ("<a><b>text", "unexpected end of input: <b> (opened on line 1, column 4) is not closed at line 1, column 11 (byte 11)", 11),
            ("<a>\n<b/>\n", "unexpected end of input: <a> (opened on line 1, column 1) is not closed at line 3, column 1 (byte 10)", 10),
            ("<a b>", "unexpected character '>' (expected '=' after attribute name 'b') at line 1, column 5 (byte 5)", 5),
            ("<a b=c>", "unexpected character 'c' (expected '\"' or ''' to open the value (values are quoted) after attribute name 'b') at line 1, column 6 (byte 6)", 6),
            ("<a b=\"1\"c=\"2\"/>", "unexpected character 'c' (expected whitespace, '>' or '/>' after an attribute) at line 1, column 9 (byte 9)", 9),
            ("<a b=\"1\" b='2'/>", "duplicate attribute 'b' at line 1, column 10 (byte 10)", 10),
            ("<a b=\"1<2\"/>", "'<' in an attribute value (write &lt;) at line 1, column 8 (byte 8)", 8),
            ("<a b=\"1/>", "unexpected end of input (expected the closing quote of the attribute value) at line 1, column 10 (byte 10)", 10),
            ("<a =\"1\"/>", "unexpected character '=' (expected an attribute name, '>' or '/>') at line 1, column 4 (byte 4)", 4),
            ("<a/ >", "unexpected space (expected '>' after '/' in a start tag) at line 1, column 4 (byte 4)", 4),
            ("<a>1 < 2</a>", "unexpected space (expected an element name after '<'; write &lt; for a '<' in text) at line 1, column 7 (byte 7)", 7),
            ("< a/>", "unexpected space (expected an element name after '<'; write &lt; for a '<' in text) at line 1, column 2 (byte 2)", 2),
            ("<1a/>", "unexpected character '1' (expected an element name after '<'; write &lt; for a '<' in text) at line 1, column 2 (byte 2)", 2),
            ("<a></a >x", "text after the root element (unexpected character 'x') at line 1, column 9 (byte 9)", 9),
            ("<a/><b/>", "a second root element <b> (a document has one root element) at line 1, column 5 (byte 5)", 5),
            ("<a></a\n", "unexpected end of input (expected '>' to end the end tag) at line 2, column 1 (byte 8)", 8),
            ("<a></a x>", "unexpected character 'x' (expected '>' to end the end tag) at line 1, column 8 (byte 8)", 8),
            ("<a", "unexpected end of input (expected '>' to end the start tag) at line 1, column 3 (byte 3)", 3),
            ("<a>\u{1}</a>", "invalid character U+0001 (not allowed in XML) at line 1, column 4 (byte 4)", 4),
            ("<a b='\u{1B}'/>", "invalid character U+001B (not allowed in XML) at line 1, column 7 (byte 7)", 7),
            ("<a>\u{FFFF}</a>", "invalid character U+FFFF (not allowed in XML) at line 1, column 4 (byte 4)", 4),
            ("<a>é×<b×/></a>", "unexpected character '×' (U+00D7) (expected whitespace, '>' or '/>' after an attribute) at line 1, column 8 (byte 10)", 10),
        ]
        for (input, message, position) in cases {
            let r = decode(input)
            XCTAssertFalse(r.ok, input)
            XCTAssertEqual(r.message, "XML: " + message, input)
            XCTAssertEqual(r.position, position, input)
        }
        // Through Lua: the error object's fields.
        lua("""
        local ok, err = pcall(xml.decode, "<a>\\n  <b></c>\\n</a>")
        assert(not ok and err.kind == "decode")
        assert(err.line == 2 and err.column == 6 and err.position == 10, err.line .. ":" .. err.column .. ":" .. err.position)
        assert(err.message == "XML: mismatched end tag </c>: expected </b> to close <b> opened on line 2, column 3 at line 2, column 6 (byte 10)", err.message)
        """)
        XCTAssertEqual(luaError("xml.decode(5)")?.message, "bad argument #1 to 'decode' (string expected, got number)")
        XCTAssertEqual(luaError("xml.decode('<a/>', { max_depth = 0 })")?.message,
                       "bad argument #2 to 'decode' (option 'max_depth' must be a positive integer, got 0)")
        XCTAssertEqual(luaError("xml.decode('<a/>', { keep_whitespace = 1 })")?.message,
                       "bad argument #2 to 'decode' (option 'keep_whitespace' must be a boolean, got number)")
        XCTAssertEqual(luaError("xml.decode('<a/>', { keepWhitespace = true })")?.message,
                       "bad argument #2 to 'decode' (unknown option 'keepWhitespace' (known: 'keep_whitespace', 'max_depth', 'ignore_encoding'))")
        XCTAssertEqual(luaError("xml.decode('<a/>', 'x')")?.kind, "argument")
    }

    func testInvalidUTF8IsRejected() {
        let cases: [[UInt8]] = [
            Array("<a>".utf8) + [0xFF] + Array("</a>".utf8),
            Array("<a>".utf8) + [0xC0, 0xAF] + Array("</a>".utf8),              // overlong
            Array("<a>".utf8) + [0xED, 0xA0, 0x80] + Array("</a>".utf8),        // a surrogate
            Array("<a>".utf8) + [0xF4, 0x90, 0x80, 0x80] + Array("</a>".utf8),  // above U+10FFFF
            Array("<a>".utf8) + [0xE2, 0x82] + Array("</a>".utf8),              // cut
            Array("<a x='".utf8) + [0x80] + Array("'/>".utf8),
            Array("<a".utf8) + [0xFF] + Array("/>".utf8),
            Array("<a><!-- ".utf8) + [0xFE] + Array(" --></a>".utf8),
            Array("<a><![CDATA[".utf8) + [0xC3] + Array("]]></a>".utf8),
            Array("<a><?pi ".utf8) + [0xC3, 0x28] + Array("?></a>".utf8),
            Array("<a/><!-- ".utf8) + [0xFF] + Array(" -->".utf8),
        ]
        for bytes in cases {
            let message = failure(bytes: bytes)
            XCTAssertTrue(message.hasPrefix("invalid UTF-8 (byte 0x") || message.hasPrefix("unexpected"), message)
        }
        XCTAssertEqual(failure(bytes: Array("<a>xy".utf8) + [0xFF] + Array("</a>".utf8)), "invalid UTF-8 (byte 0xFF) at line 1, column 6 (byte 6)")
        XCTAssertEqual(failure(bytes: Array("<a>".utf8) + [0xE2, 0x28, 0xA1] + Array("</a>".utf8)), "invalid UTF-8 (byte 0x28) at line 1, column 5 (byte 5)")
        XCTAssertEqual(failure(bytes: Array("<a>".utf8) + [0xE2, 0x82]), "unexpected end of input (expected the rest of a UTF-8 sequence) at line 1, column 5 (byte 6)")
    }

    func testNestingLimit() {
        // 100,000 levels: an error, not a crash.
        var e = luaError("xml.decode(string.rep('<a>', 100000) .. string.rep('</a>', 100000))")
        XCTAssertEqual(e?.kind, "decode")
        XCTAssertEqual(e?.message, "XML: nesting too deep (more than 1000 levels of elements) at line 1, column 3001 (byte 3001)")
        e = luaError("xml.decode(string.rep('<a>', 100000))")
        XCTAssertEqual(e?.position, 3001)
        XCTAssertEqual(luaError("xml.decode('<a><b><c/></b></a>', { max_depth = 2 })")?.position, 7)
        XCTAssertEqual(lua("return xml.decode('<a><b><c/></b></a>', { max_depth = 3 }).children[1].children[1].tag"), "c")
        XCTAssertEqual(lua("""
        local e = xml.decode(string.rep('<a>', 1000) .. 'x' .. string.rep('</a>', 1000))
        local n = 1
        while type(e.children[1]) == "table" do e = e.children[1]; n = n + 1 end
        return n .. e.children[1]
        """), "1000x")
        // The parser is iterative: a raised limit is bounded by the Lua stack, never the C stack.
        XCTAssertEqual(lua("""
        local e = xml.decode(string.rep('<a>', 100000) .. string.rep('</a>', 100000), { max_depth = 200000 })
        local n = 1
        while e.children[1] do e = e.children[1]; n = n + 1 end
        return n
        """), "100000")
    }

    func testLuaStackExhaustionIsAnError() {
        // Fill the Lua stack until under 200 slots are left: a deeper document then fails
        // cleanly, one value on the stack, and the slots come back.
        let top = lua_gettop(L)
        while lua_checkstack(L, 200) != 0 {
            for _ in 0..<100 { lua_pushnil(L) }
        }
        let filled = lua_gettop(L)
        var options = LuaXMLDecoder.Options()
        options.maxDepth = 100_000
        let r = decode(String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300), options: options)
        XCTAssertEqual(r.message.prefix(44), "XML: nesting too deep for the Lua stack at l")
        XCTAssertEqual(lua_gettop(L), filled)
        XCTAssertTrue(decode("<a><b/></a>").ok)
        lua_settop(L, top)
        XCTAssertTrue(decode(String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300), options: options).ok)
    }

    func testTruncatedDocumentsAreRejectedCleanly() {
        let doc = Array(Self.slideshow.utf8)
        XCTAssertTrue(decodeBytes(doc).ok)
        var messages = Set<String>()
        for n in 0..<doc.count {
            let r = decodeBytes(Array(doc[0..<n]))
            XCTAssertFalse(r.ok, "a prefix of \(n) bytes must not decode")
            messages.insert(String(r.message.prefix(40)))
        }
        XCTAssertGreaterThan(messages.count, 10)
        // The same for a document with every construct in it.
        let dense = Array(Self.dense.utf8)
        XCTAssertTrue(decodeBytes(dense).ok, decodeBytes(dense).message)
        for n in 0..<dense.count {
            XCTAssertFalse(decodeBytes(Array(dense[0..<n])).ok, "a prefix of \(n) bytes must not decode")
        }
    }

    /// Random damage: never a crash, never a stray stack value, and whatever decodes also
    /// encodes and decodes back to the same tables.
    func testMutatedDocuments() {
        let doc = Array(Self.dense.utf8)
        let specials: [UInt8] = Array("<>/=\"'&;#x![]-? \n\r\tabc:".utf8) + [0x00, 0x80, 0xBF, 0xC3, 0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0xFF]
        var random = Xorshift()
        func next(_ n: Int) -> Int { random.next(n) }
        var accepted = 0
        for round in 0..<20000 {
            var bytes = doc
            for _ in 0...next(3) {
                switch next(4) {
                case 0: bytes[next(bytes.count)] = specials[next(specials.count)]
                case 1: bytes.insert(specials[next(specials.count)], at: next(bytes.count + 1))
                case 2: bytes[next(bytes.count)] ^= UInt8(1 << next(8))
                default: if bytes.count > 1 { bytes.remove(at: next(bytes.count)) }
                }
            }
            var options = LuaXMLDecoder.Options()
            options.keepWhitespace = round % 2 == 0
            if decodeBytes(bytes, options: options).ok {
                accepted += 1
                roundTrip(bytes, options)
            }
        }
        XCTAssertGreaterThan(accepted, 1000)
    }
}
