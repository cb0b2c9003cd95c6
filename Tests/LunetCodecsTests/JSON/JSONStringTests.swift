import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// JSON strings: escapes, surrogates, UTF-8 checked both ways.
final class JSONStringTests: JSONCodecTestCase {
    func testStringEscapes() {
        XCTAssertEqual(lua(#"return json.encode("q\"b\\s/\n\r\t\b\f\1\31\127")"#), #""q\"b\\s/\n\r\t\b\f\u0001\u001f\#u{7F}""#)
        XCTAssertEqual(lua(#"return json.encode("héllo ✓ 😀")"#), "\"héllo ✓ 😀\"")
        lua(#"""
        assert(json.decode([["\"\\\/\b\f\n\r\t"]]) == "\"\\/\b\f\n\r\t")
        assert(json.decode([["\u0041\u00e9\u20AC"]]) == "Aé€")
        assert(json.decode([["\ud83d\ude00"]]) == "😀")
        assert(json.decode([["\uD834\uDD1E x"]]) == "\u{1D11E} x")
        assert(json.decode([["\u0000"]]) == "\0")
        assert(json.decode([["a\u0000b"]]) == "a\0b")
        local long = string.rep("abcdefgh", 1000) .. "\n" .. string.rep("é", 1000)
        assert(json.decode(json.encode(long)) == long)
        for b = 0, 127 do
          local s = string.char(b)
          assert(json.decode(json.encode(s)) == s, b)
        end
        -- special bytes at every offset of the eight-byte scans, in values and in keys
        local specials = { '"', '\\', '\n', '\1', '\127', '/', 'é', '€', '😀' }
        for _, x in ipairs(specials) do
          for _, y in ipairs(specials) do
            for k = 0, 9 do
              for m = 0, 9 do
                local s = string.rep("a", k) .. x .. string.rep("b", m) .. y .. "c"
                local text = json.encode({ [s] = s })
                local back = json.decode(text)
                assert(back[s] == s, text)
              end
            end
          end
        end
        """#)
    }

    func testLoneSurrogatesAreRejected() {
        for text in [#""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\ud800x""#, #""\ude00\ud83d""#] {
            let e = luaError("json.decode([[\(text)]])")
            XCTAssertEqual(e?.kind, "decode")
            XCTAssertTrue(e?.message.contains("lone UTF-16 surrogate") == true, e?.message ?? "")
        }
        XCTAssertEqual(luaError(#"json.decode([["ab\ud800"]])"#)?.position, 4)
    }

    func testInvalidUTF8IsRejectedBothWays() {
        // decoding
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
                                [0x22, 0xE2, 0x82, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0x80, 0x22],
                                [0x22, 0xE2, 0x82]] {
            let r = decodeBytes(bytes)
            XCTAssertFalse(r.ok, "\(bytes)")
            XCTAssertTrue(r.message.hasPrefix("decode: JSON: "), r.message)
        }
        XCTAssertTrue(decodeBytes([0x22, 0xFF, 0x22]).message.contains("invalid UTF-8 (byte 0xFF) at line 1, column 2 (byte 2)"))
        XCTAssertTrue(decodeBytes([0x22, 0x5C, 0x6E, 0xFE, 0x22]).message.contains("invalid UTF-8"))
        XCTAssertTrue(decodeBytes([0x22, 0xE2, 0x82, 0xAC, 0x22]).ok)
        // encoding
        var e = luaError(#"json.encode({ a = { b = { "ok", "bad\255" } } })"#)
        XCTAssertEqual(e?.kind, "argument")
        XCTAssertEqual(e?.message, "cannot encode a string that is not valid UTF-8 (byte 0xFF at offset 4) at $.a.b[2]")
        e = luaError(#"json.encode({ ["k\192"] = 1 })"#)
        XCTAssertEqual(e?.message, #"cannot encode a key that is not valid UTF-8 (byte 0xC0 at offset 2) at $["k\xC0"]"#)
        XCTAssertNotNil(luaError(#"json.encode("\237\160\128")"#))     // an encoded surrogate
        XCTAssertNotNil(luaError(#"json.encode("\244\144\128\128")"#))  // above U+10FFFF
    }
}
