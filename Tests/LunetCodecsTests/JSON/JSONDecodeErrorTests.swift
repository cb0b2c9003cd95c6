import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// Decoding what is not JSON: messages with line, column and byte; truncated and mutated input; the depth limit.
final class JSONDecodeErrorTests: JSONCodecTestCase {
    func testMalformedInputsNamePositions() {
        let cases: [(String, String, Int)] = [
            ("", "empty input (expected a JSON value) at line 1, column 1 (byte 1)", 1),
            ("   ", "unexpected end of input (expected a value) at line 1, column 4 (byte 4)", 4),
            ("{\"a\":1,\n \"b\":2,\n \"c\":3 }}", "unexpected character '}' after the JSON value at line 3, column 9 (byte 25)", 25),
            ("[1,2", "unexpected end of input (expected ',' or ']') at line 1, column 5 (byte 5)", 5),
            ("[1,2,]", "unexpected character ']' (expected a value) at line 1, column 6 (byte 6)", 6),
            ("{\"a\" 1}", "unexpected character '1' (expected ':') at line 1, column 6 (byte 6)", 6),
            ("{\"a\":1,}", "unexpected character '}' (expected a string key) at line 1, column 8 (byte 8)", 8),
            ("{1:2}", "unexpected character '1' (expected a string key) at line 1, column 2 (byte 2)", 2),
            ("[1 2]", "unexpected character '2' (expected ',' or ']') at line 1, column 4 (byte 4)", 4),
            ("\"abc", "unexpected end of input (expected '\"' to close the string) at line 1, column 5 (byte 5)", 5),
            ("\"a\tb\"", "unescaped control character 0x09 in string at line 1, column 3 (byte 3)", 3),
            ("\"\\x\"", "invalid escape '\\x' in string at line 1, column 3 (byte 3)", 3),
            ("\"\\u12G4\"", "invalid \\u escape (expected 4 hexadecimal digits) at line 1, column 6 (byte 6)", 6),
            ("01", "leading zero in number at line 1, column 1 (byte 1)", 1),
            ("-", "unexpected end of input (expected a digit) at line 1, column 2 (byte 2)", 2),
            ("1.", "unexpected end of input (expected a digit after '.') at line 1, column 3 (byte 3)", 3),
            ("1.e5", "unexpected character 'e' (expected a digit after '.') at line 1, column 3 (byte 3)", 3),
            ("1e", "unexpected end of input (expected a digit in the exponent) at line 1, column 3 (byte 3)", 3),
            ("[.5]", "unexpected character '.' (expected a value) at line 1, column 2 (byte 2)", 2),
            ("tru", "invalid literal (expected 'true') at line 1, column 1 (byte 1)", 1),
            ("nul", "invalid literal (expected 'null') at line 1, column 1 (byte 1)", 1),
            ("[falsy]", "invalid literal (expected 'false') at line 1, column 2 (byte 2)", 2),
            ("[1e999]", "number out of range for a double at line 1, column 2 (byte 2)", 2),
            ("[NaN]", "unexpected character 'N' (expected a value) at line 1, column 2 (byte 2)", 2),
            ("\"é\" x", "unexpected character 'x' after the JSON value at line 1, column 5 (byte 6)", 6),
            ("[1]\u{0}", "unexpected byte 0x00 after the JSON value at line 1, column 4 (byte 4)", 4),
        ]
        for (input, message, position) in cases {
            let top = lua_gettop(L)
            let status = Array(input.utf8).withUnsafeBytes { LuaJSONDecoder.decode(L, $0) }
            XCTAssertEqual(status, LUNET_RAISE, input)
            XCTAssertEqual(lua_gettop(L), top + 1)
            let s = LuaStack(L)
            XCTAssertEqual(s.stringField(-1, "kind"), "decode")
            XCTAssertEqual(s.stringField(-1, "message"), "JSON: " + message, input)
            XCTAssertEqual(s.integerField(-1, "position"), position, input)
            lua_settop(L, top)
        }
        let e = luaError("json.decode('[1, 2,\\n  3 x]')")
        XCTAssertEqual(e?.kind, "decode")
        XCTAssertEqual(e?.message, "JSON: unexpected character 'x' (expected ',' or ']') at line 2, column 5 (byte 12)")
        XCTAssertEqual(e?.position, 12)
        XCTAssertEqual(luaError("json.decode(5)")?.message, "bad argument #1 to 'decode' (string expected, got number)")
        XCTAssertEqual(luaError("json.decode('1', { max_depth = 0 })")?.message,
                       "bad argument #2 to 'decode' (option 'max_depth' must be a positive integer, got 0)")
        XCTAssertEqual(luaError("json.decode('1', { max_depth = 'x' })")?.message,
                       "bad argument #2 to 'decode' (option 'max_depth' must be a positive integer, got a string)")
        XCTAssertEqual(luaError("json.decode('1', { depth = 3 })")?.kind, "argument")
    }

    func testTruncatedInputsAreRejectedCleanly() {
        let doc = Array(#"{"a":[1,-2.5e3,true,false,null,"x\u00e9\n",{"b":{}}],"c":"😀"}"#.utf8)
        XCTAssertTrue(decodeBytes(doc).ok)
        for n in 0..<doc.count {
            XCTAssertFalse(decodeBytes(Array(doc[0..<n])).ok, "prefix of \(n) bytes")
        }
    }

    /// Random damage to a document: never a crash, never a stray stack value, and whatever
    /// decodes also encodes and decodes back to the same value.
    func testMutatedDocuments() {
        let doc = Array(#"{"a":[1,-2.5e3,true,false,null,"x\u00e9\n\ud83d\ude00",{"b":{}},[]],"c":"😀 é","d":12345678901234567890,"e":{"f":[0.5,"\"\\/"]}}"#.utf8)
        XCTAssertTrue(decodeBytes(doc).ok)
        let specials: [UInt8] = Array(#"{}[],:"\ u0123456789eE.-+tfnl"#.utf8) + [0x00, 0x0A, 0x80, 0xBF, 0xC3, 0xE2, 0xED, 0xF0, 0xF4, 0xFF]
        var random = Xorshift()
        func next(_ n: Int) -> Int { random.next(n) }
        var accepted = 0
        for _ in 0..<5000 {
            var bytes = doc
            for _ in 0...next(3) {
                switch next(3) {
                case 0: bytes[next(bytes.count)] = specials[next(specials.count)]
                case 1: bytes.insert(specials[next(specials.count)], at: next(bytes.count + 1))
                default: if bytes.count > 1 { bytes.remove(at: next(bytes.count)) }
                }
            }
            if decodeBytes(bytes).ok {
                accepted += 1
                roundTrip(bytes, String(decoding: bytes, as: UTF8.self))
            }
        }
        XCTAssertGreaterThan(accepted, 100)
    }

    func testByteOrderMarkIsSkipped() {
        XCTAssertTrue(decodeBytes([0xEF, 0xBB, 0xBF] + Array("[1]".utf8)).ok)
        XCTAssertFalse(decodeBytes([0xEF, 0xBB, 0xBF]).ok)
        XCTAssertFalse(decodeBytes(Array(" ".utf8) + [0xEF, 0xBB, 0xBF] + Array("[1]".utf8)).ok)
    }

    func testNestingLimit() {
        // 100,000 levels: an error, not a crash, with the default limit and with a raised one.
        var e = luaError("json.decode(string.rep('[', 100000) .. string.rep(']', 100000))")
        XCTAssertEqual(e?.kind, "decode")
        XCTAssertEqual(e?.message, "JSON: nesting too deep (more than 1000 levels of arrays and objects) at line 1, column 1001 (byte 1001)")
        e = luaError("json.decode(string.rep('{\"a\":', 100000))")
        XCTAssertEqual(e?.position, 1000 * 5 + 1)
        XCTAssertEqual(luaError("json.decode('[[[1]]]', { max_depth = 2 })")?.position, 3)
        XCTAssertEqual(lua("return json.decode('[[[1]]]', { max_depth = 3 })[1][1][1]"), "1")
        XCTAssertEqual(lua("return #json.encode(json.decode(string.rep('[', 1000) .. string.rep(']', 1000)))"), "2000")
        // The parser is iterative: a raised limit is bounded by the Lua stack, never the C stack.
        XCTAssertEqual(lua("""
        local v = json.decode(string.rep('[', 100000) .. string.rep(']', 100000), { max_depth = 200000 })
        local n = 0
        while v[1] do v = v[1]; n = n + 1 end
        return n
        """), "99999")
        e = luaError("json.decode(string.rep('[', 1000000), { max_depth = 2000000 })")
        XCTAssertEqual(e?.message, "JSON: unexpected end of input (expected a value) at line 1, column 1000001 (byte 1000001)")
    }
}
