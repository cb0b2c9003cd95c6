import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// The XML codec through the `xml` module, on a bare Lua state (no host, no prelude): the state,
/// sample documents and the helpers the XML tests share.
class XMLCodecTestCase: LuaSnippetTestCase {
    override func setUp() {
        super.setUp()
        makeState(module: "xml", XMLModule.pushModule)
        lua(#"""
        -- A deep comparison of element tables.
        function deq(a, b)
          if type(a) ~= type(b) then return false end
          if type(a) ~= "table" then return a == b end
          for k, v in pairs(a) do if not deq(v, b[k]) then return false end end
          for k in pairs(b) do if a[k] == nil then return false end end
          return true
        end
        -- A compact view of an element: tag[ns]{a=1,b=2}(child,child), strings quoted, with
        -- backslash, quote, LF, CR and tab escaped.
        local esc = { ["\\"] = "\\\\", ['"'] = '\\"', ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
        function show(e)
          if type(e) == "string" then return '"' .. (e:gsub('[\\"\n\r\t]', esc)) .. '"' end
          local keys = {}
          for k in pairs(e.attrs) do keys[#keys + 1] = k end
          table.sort(keys)
          local attrs = {}
          for _, k in ipairs(keys) do attrs[#attrs + 1] = k .. "=" .. (e.attrs[k]:gsub('[\\"\n\r\t]', esc)) end
          local children = {}
          for i, c in ipairs(e.children) do children[i] = show(c) end
          return e.tag .. (e.ns and "[" .. e.ns .. "]" or "")
            .. (#attrs > 0 and "{" .. table.concat(attrs, ",") .. "}" or "")
            .. (#children > 0 and "(" .. table.concat(children, ",") .. ")" or "")
        end
        """#)
    }

    // MARK: helpers






    /// Decodes raw bytes with the Swift entry point; checks the stack discipline. On success,
    /// `message` is the compact view of the element (see `show`).
    @discardableResult

    func decodeBytes(_ bytes: [UInt8], options: LuaXMLDecoder.Options = .init(),
                             file: StaticString = #filePath, line: UInt = #line) -> (ok: Bool, message: String, position: Int?) {
        let top = lua_gettop(L)
        let status = bytes.withUnsafeBytes { XMLModule.decode(L, $0, options: options) }
        XCTAssertEqual(lua_gettop(L), top + 1, "decode must leave exactly one value", file: file, line: line)
        defer { lua_settop(L, top) }
        if status == 1 {
            XCTAssertEqual(lua_type(L, -1), LUA_TTABLE, file: file, line: line)
            lua_getglobal(L, "show")
            lua_pushvalue(L, -2)
            guard lunet_pcall(L, 1, 1) == LUA_OK else { return (true, describeError(-1), nil) }
            return (true, LuaStack(L).string(-1) ?? "?", nil)
        }
        XCTAssertEqual(status, LUNET_RAISE, file: file, line: line)
        XCTAssertEqual(LuaStack(L).stringField(-1, "kind"), "decode", file: file, line: line)
        return (false, LuaStack(L).stringField(-1, "message") ?? "?", LuaStack(L).integerField(-1, "position"))
    }

    func decode(_ text: String, options: LuaXMLDecoder.Options = .init(), file: StaticString = #filePath, line: UInt = #line) -> (ok: Bool, message: String, position: Int?) {
        decodeBytes(Array(text.utf8), options: options, file: file, line: line)
    }

    /// The compact view of a document that must decode.
    func view(_ text: String, keepWhitespace: Bool = false, file: StaticString = #filePath, line: UInt = #line) -> String {
        var options = LuaXMLDecoder.Options()
        options.keepWhitespace = keepWhitespace
        let r = decode(text, options: options, file: file, line: line)
        XCTAssertTrue(r.ok, "\(text): \(r.message)", file: file, line: line)
        return r.message
    }

    /// The error message of a document that must not decode (without the "XML: " prefix).
    func failure(_ text: String, options: LuaXMLDecoder.Options = .init(), file: StaticString = #filePath, line: UInt = #line) -> String {
        failure(bytes: Array(text.utf8), options: options, file: file, line: line)
    }

    func failure(bytes: [UInt8], options: LuaXMLDecoder.Options = .init(), file: StaticString = #filePath, line: UInt = #line) -> String {
        let r = decodeBytes(bytes, options: options, file: file, line: line)
        XCTAssertFalse(r.ok, "must not decode: \(String(decoding: bytes, as: UTF8.self))", file: file, line: line)
        XCTAssertTrue(r.message.hasPrefix("XML: "), r.message, file: file, line: line)
        return String(r.message.dropFirst(5))
    }

    /// Decodes, encodes (plain and pretty), decodes again: the same tables.
    func roundTrip(_ bytes: [UInt8], _ options: LuaXMLDecoder.Options, file: StaticString = #filePath, line: UInt = #line) {
        let top = lua_gettop(L)
        defer { lua_settop(L, top) }
        XCTAssertEqual(bytes.withUnsafeBytes { XMLModule.decode(L, $0, options: options) }, 1)
        for pretty in [false, true] where !(pretty && options.keepWhitespace) {
            var encoding = LuaXMLEncoder.Options()
            encoding.pretty = pretty
            let out = ByteBuffer()
            if let error = LuaXMLEncoder.encode(L, index: top + 1, options: encoding, into: out) {
                XCTFail("cannot encode what was decoded: \(error) from \(String(decoding: bytes, as: UTF8.self))", file: file, line: line)
                return
            }
            XCTAssertEqual(XMLModule.decode(L, UnsafeRawBufferPointer(out.bytes), options: options), 1, "\(out.string)", file: file, line: line)
            lua_getglobal(L, "deq")
            lua_pushvalue(L, top + 1)
            lua_pushvalue(L, -3)
            XCTAssertEqual(lunet_pcall(L, 2, 1), LUA_OK)
            XCTAssertEqual(lua_toboolean(L, -1), 1, "changed in a round trip: \(String(decoding: bytes, as: UTF8.self)) -> \(out.string)", file: file, line: line)
            lua_settop(L, top + 1)
        }
    }

    static let slideshow = """
    <?xml version='1.0' encoding='us-ascii'?>

    <!--  Slides for a small talk  -->

    <slideshow
        title="Lunet in Ten Minutes"
        date="Spring"
        author="The Team"
        >

        <!-- FIRST SLIDE -->
        <slide type="all">
          <title>Hello, Lunet!</title>
        </slide>

        <!-- AGENDA -->
        <slide type="all">
            <title>Agenda</title>
            <item>Why <em>tasks</em> beat callbacks</item>
            <item/>
            <item>How <em>sessions</em> share a pool</item>
        </slide>

    </slideshow>
    """

    static let dense = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE r [<!ENTITY e "x"><!-- c -->]>
    <r xmlns="urn:r" xmlns:p='urn:p' a="1 &amp; 2" b='&#x41;&#66;'>
      <p:x p:attr="v">text &lt;here&gt; <![CDATA[<raw> & ]]]]>é😀</p:x>
      <!-- comment --><?pi data?>
      <y/><z k="&quot;q&apos;">mixed <b>bold</b> tail</z>
      <w xmlns="">\r\n  </w>
    </r>
    """
}
