import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// Encoding element tables: the text, pretty, errors naming the path, the Swift entry point.
final class XMLEncodeTests: XMLCodecTestCase {
    func testEncode() {
        XCTAssertEqual(lua("return xml.encode({ tag = 'a' })"), "<a/>")
        XCTAssertEqual(lua("return xml.encode({ tag = 'a', attrs = {}, children = {} })"), "<a/>")
        XCTAssertEqual(lua("return xml.encode({ tag = 'a', attrs = { z = '1', b = 2, a = 'x', ['p:q'] = 1.5 }, children = { 'hi' } })"),
                       #"<a a="x" b="2" p:q="1.5" z="1">hi</a>"#)
        XCTAssertEqual(lua(#"return xml.encode({ tag = 'a', attrs = { v = [[<&>"' ]] .. "\t\n\r" }, children = { [[<&>"']] .. "\t\n\r]]>" } })"#),
                       #"<a v="&lt;&amp;&gt;&quot;' &#9;&#10;&#13;">&lt;&amp;&gt;"'"# + "\t\n&#13;]]&gt;</a>")
        XCTAssertEqual(lua("return xml.encode({ tag = 'a', children = { 'x', { tag = 'b' }, 'y', { tag = 'c', children = { 'z' } } } })"),
                       "<a>x<b/>y<c>z</c></a>")
        XCTAssertEqual(lua("return xml.encode({ tag = 'a' }, { declaration = true })"), #"<?xml version="1.0" encoding="UTF-8"?><a/>"#)
        XCTAssertEqual(lua("return xml.encode({ tag = 'é', attrs = { ['ü'] = '€😀' }, children = { '日本' } })"), #"<é ü="€😀">日本</é>"#)
        // Special characters at every offset of the eight-byte scans survive a round trip.
        lua("""
        local specials = { "<", "&", ">", '"', "'", "\\n", "\\r", "\\t", "é", "€", "😀", "]]>" }
        for _, x in ipairs(specials) do
          for k = 0, 9 do
            for m = 0, 9 do
              local s = string.rep("a", k) .. x .. string.rep("b", m) .. x .. "c"
              local e = { tag = "t", attrs = { v = s }, children = { s } }
              local back = xml.decode(xml.encode(e))
              assert(back.attrs.v == s and back.children[1] == s, string.format("%q", s))
            end
          end
        end
        """)
    }

    func testEncodePretty() {
        XCTAssertEqual(lua("""
        return xml.encode({ tag = "root", attrs = { id = "1" }, children = {
          { tag = "empty" },
          { tag = "list", children = { { tag = "item", children = { "one" } }, { tag = "item", children = { "two" } } } },
          { tag = "mixed", children = { "Why ", { tag = "em", children = { { tag = "b", children = { "so" } } } }, " much" } },
          { tag = "deep", children = { { tag = "er", children = { { tag = "est" } } } } },
        } }, { pretty = true, declaration = true })
        """), """
        <?xml version="1.0" encoding="UTF-8"?>
        <root id="1">
          <empty/>
          <list>
            <item>one</item>
            <item>two</item>
          </list>
          <mixed>Why <em><b>so</b></em> much</mixed>
          <deep>
            <er>
              <est/>
            </er>
          </deep>
        </root>
        """)
        XCTAssertEqual(lua("return xml.encode({ tag = 'a' }, { pretty = true })"), "<a/>")
        XCTAssertEqual(lua("return xml.encode({ tag = 'a', children = { 'x' } }, { pretty = true })"), "<a>x</a>")
        // Pretty output decodes to the same tables (whitespace-only text is dropped).
        lua("""
        local e = xml.decode([==[\(Self.dense)]==])
        assert(deq(e, xml.decode(xml.encode(e, { pretty = true }))))
        """)
    }

    func testEncodeErrorsNameThePath() {
        let cases: [(String, String)] = [
            ("xml.encode({})", "cannot encode an element without a string tag (got nil) at $.tag"),
            ("xml.encode({ tag = 5 })", "cannot encode an element without a string tag (got number) at $.tag"),
            ("xml.encode({ tag = '1a' })", #"cannot encode the tag "1a" (not a valid XML name) at $.tag"#),
            ("xml.encode({ tag = 'a b' })", #"cannot encode the tag "a b" (not a valid XML name) at $.tag"#),
            ("xml.encode({ tag = '' })", #"cannot encode the tag "" (not a valid XML name) at $.tag"#),
            ("xml.encode({ tag = 'a', children = { 'x', { tag = 'b', children = { 5 } } } })",
             "cannot encode a child of type number (children are strings and element tables) at $.children[2].children[1]"),
            ("xml.encode({ tag = 'a', children = { true } })", "cannot encode a child of type boolean (children are strings and element tables) at $.children[1]"),
            ("xml.encode({ tag = 'a', children = { 'x', nil, 'y' } })", "cannot encode a child of type nil (children are strings and element tables) at $.children[2]"),
            ("xml.encode({ tag = 'a', children = { { tag = 'b', children = { {} } } } })", "cannot encode an element without a string tag (got nil) at $.children[1].children[1].tag"),
            ("xml.encode({ tag = 'a', children = 'text' })", "cannot encode children of type string (children must be a list of strings and element tables) at $.children"),
            ("xml.encode({ tag = 'a', attrs = 'x=1' })", "cannot encode attrs of type string (attrs must be a table of name = value) at $.attrs"),
            ("xml.encode({ tag = 'a', attrs = { 'x' } })", "cannot encode an attribute name of type number (attribute names are strings) at $.attrs"),
            ("xml.encode({ tag = 'a', attrs = { ['a b'] = 'x' } })", #"cannot encode the attribute name "a b" (not a valid XML name) at $.attrs["a b"]"#),
            ("xml.encode({ tag = 'a', children = { { tag = 'b', attrs = { checked = true } } } })",
             "cannot encode an attribute value of type boolean (values are strings or numbers) at $.children[1].attrs.checked"),
            ("xml.encode({ tag = 'a', attrs = { ['data-x'] = {} } })", #"cannot encode an attribute value of type table (values are strings or numbers) at $.attrs["data-x"]"#),
            ("xml.encode({ tag = 'a', attrs = { x = 'ok\\255' } })", "cannot encode an attribute value that is not valid UTF-8 (byte 0xFF at offset 3) at $.attrs.x"),
            ("xml.encode({ tag = 'a', children = { 'x', 'bad\\192' } })", "cannot encode text that is not valid UTF-8 (byte 0xC0 at offset 4) at $.children[2]"),
            ("xml.encode({ tag = 'a', children = { 'bell\\7' } })", "cannot encode text containing U+0007 (not allowed in XML) at $.children[1]"),
            ("xml.encode({ tag = 'a', attrs = { x = '\\0' } })", "cannot encode an attribute value containing U+0000 (not allowed in XML) at $.attrs.x"),
            ("xml.encode({ tag = 'a', children = { '\\239\\191\\190' } })", "cannot encode text containing U+FFFE (not allowed in XML) at $.children[1]"),
            ("xml.encode({ tag = 'a', ns = 5 })", "cannot encode ns of type number (ns must be a namespace URI string) at $.ns"),
            ("xml.encode({ tag = 'a', attrs = { xmlns = 5 } })", #"cannot encode the namespace declaration "xmlns" with a number (a namespace is a URI string) at $.attrs.xmlns"#),
            ("local e = { tag = 'a', children = {} }; e.children[1] = { tag = 'b', children = { e } }; xml.encode(e)",
             "cannot encode an element that contains itself at $.children[1].children[1]"),
        ]
        for (code, message) in cases {
            let e = luaError(code)
            XCTAssertEqual(e?.kind, "argument", code)
            XCTAssertEqual(e?.message, message, code)
        }
        let e = luaError("""
        local root = { tag = "a" }
        local cur = root
        for i = 1, 1000 do local c = { tag = "a" }; cur.children = { c }; cur = c end
        xml.encode(root)
        """)
        XCTAssertTrue(e?.message.hasPrefix("cannot encode: nesting deeper than 1000 levels at $.children[1]") == true, e?.message ?? "")
        XCTAssertEqual(lua("""
        local root = { tag = "a" }
        local cur = root
        for i = 1, 999 do local c = { tag = "a" }; cur.children = { c }; cur = c end
        return #xml.encode(root)
        """), String(999 * 7 + 4))
        XCTAssertEqual(luaError("xml.encode('<a/>')")?.message, "bad argument #1 to 'encode' (element table expected, got string)")
        XCTAssertEqual(luaError("xml.encode()")?.message, "bad argument #1 to 'encode' (element expected)")
        XCTAssertEqual(luaError("xml.encode({ tag = 'a' }, { pretty = 'yes' })")?.message,
                       "bad argument #2 to 'encode' (option 'pretty' must be a boolean, got string)")
        XCTAssertEqual(luaError("xml.encode({ tag = 'a' }, { indent = 2 })")?.message,
                       "bad argument #2 to 'encode' (unknown option 'indent' (known: 'pretty', 'declaration'))")
    }

    func testEncodeIntoByteBuffer() {
        lua("element = { tag = 'n', children = { '7' } }")
        lua_getglobal(L, "element")
        let out = ByteBuffer()
        out.append("x=", 2)
        let top = lua_gettop(L)
        XCTAssertNil(LuaXMLEncoder.encode(L, index: -1, options: .init(), into: out))
        XCTAssertEqual(lua_gettop(L), top)
        XCTAssertEqual(out.string, "x=<n>7</n>")
        lua_pushinteger(L, 5)
        let error = LuaXMLEncoder.encode(L, index: -1, options: .init(), into: out)
        XCTAssertEqual(error?.kind, .argument)
        XCTAssertEqual(error?.message, "cannot encode a number as an element (an element is a table with a tag) at $")
        XCTAssertEqual(lua_gettop(L), top + 1)
        XCTAssertEqual(out.string, "x=<n>7</n>")
        lua_settop(L, 0)
    }
}
