import CLunet
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// The XML codec through the `xml` module, on a bare Lua state (no host, no prelude).
final class XMLCodecTests: LuaSnippetTestCase {

    override func setUp() {
        super.setUp()
        L = lunet_newstate()!
        XCTAssertEqual(lunet_openlibs(L), LUA_OK)
        XMLModule.pushModule(L)
        lua_setglobal(L, "xml")
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
    private func decodeBytes(_ bytes: [UInt8], options: LuaXMLDecoder.Options = .init(),
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

    private func decode(_ text: String, options: LuaXMLDecoder.Options = .init(), file: StaticString = #filePath, line: UInt = #line) -> (ok: Bool, message: String, position: Int?) {
        decodeBytes(Array(text.utf8), options: options, file: file, line: line)
    }

    /// The compact view of a document that must decode.
    private func view(_ text: String, keepWhitespace: Bool = false, file: StaticString = #filePath, line: UInt = #line) -> String {
        var options = LuaXMLDecoder.Options()
        options.keepWhitespace = keepWhitespace
        let r = decode(text, options: options, file: file, line: line)
        XCTAssertTrue(r.ok, "\(text): \(r.message)", file: file, line: line)
        return r.message
    }

    /// The error message of a document that must not decode (without the "XML: " prefix).
    private func failure(_ text: String, options: LuaXMLDecoder.Options = .init(), file: StaticString = #filePath, line: UInt = #line) -> String {
        failure(bytes: Array(text.utf8), options: options, file: file, line: line)
    }

    private func failure(bytes: [UInt8], options: LuaXMLDecoder.Options = .init(), file: StaticString = #filePath, line: UInt = #line) -> String {
        let r = decodeBytes(bytes, options: options, file: file, line: line)
        XCTAssertFalse(r.ok, "must not decode: \(String(decoding: bytes, as: UTF8.self))", file: file, line: line)
        XCTAssertTrue(r.message.hasPrefix("XML: "), r.message, file: file, line: line)
        return String(r.message.dropFirst(5))
    }

    // MARK: decoding

    func testElementTables() {
        lua("""
        local e = xml.decode('<a x="1" y=\\'two\\'><b>hi</b><c/>tail</a>')
        assert(e.tag == "a" and e.attrs.x == "1" and e.attrs.y == "two" and e.ns == nil)
        assert(#e.children == 3)
        local b, c = e.children[1], e.children[2]
        assert(b.tag == "b" and next(b.attrs) == nil and b.children[1] == "hi" and #b.children == 1)
        assert(c.tag == "c" and next(c.attrs) == nil and type(c.children) == "table" and #c.children == 0)
        assert(e.children[3] == "tail")
        """)
        XCTAssertEqual(view("<r/>"), "r")
        XCTAssertEqual(view("<r></r>"), "r")
        XCTAssertEqual(view("<r a = \"1\"\n\tb='2' ></r >"), "r{a=1,b=2}")
        XCTAssertEqual(view("<名前 属性=\"値\">テキスト</名前>"), "名前{属性=値}(\"テキスト\")")
        XCTAssertEqual(view("<a.b-c_d:e1 _x=\"\"/>"), "a.b-c_d:e1{_x=}")
    }

    func testManyChildrenAndAttributes() {
        // Children past the number that wait on the Lua stack, in order.
        lua("""
        for _, n in ipairs{ 1, 255, 256, 257, 1000, 20000 } do
          local parts = {}
          for i = 1, n do parts[i] = '<i n="' .. i .. '"/>' .. (i % 3 == 0 and "t" .. i or "") end
          local e = xml.decode("<r>" .. table.concat(parts) .. "</r>")
          local k = 0
          for i = 1, n do
            k = k + 1
            assert(e.children[k].tag == "i" and e.children[k].attrs.n == tostring(i), n .. ":" .. i)
            if i % 3 == 0 then k = k + 1; assert(e.children[k] == "t" .. i) end
          end
          assert(#e.children == k)
        end
        -- many attributes, and a duplicate among many
        local attrs = {}
        for i = 1, 500 do attrs[i] = "a" .. i .. '="' .. i .. '"' end
        local e = xml.decode("<r " .. table.concat(attrs, " ") .. "/>")
        for i = 1, 500 do assert(e.attrs["a" .. i] == tostring(i)) end
        local ok, err = pcall(xml.decode, "<r " .. table.concat(attrs, " ") .. ' a250="x"/>')
        assert(not ok and err.message:find("duplicate attribute 'a250'", 1, true), err.message)
        """)
    }

    func testNamespaces() {
        lua("""
        local e = xml.decode([[
        <soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns="urn:default">
          <soap:Body>
            <GetPrice xmlns:m="urn:prices">
              <m:Item>Apples</m:Item>
              <inner xmlns="urn:inner"><deep/><m:x xmlns:m="urn:other"/></inner>
              <none xmlns=""><child/></none>
              <u:unbound/>
              <after/>
            </GetPrice>
          </soap:Body>
          <xml:lang/>
        </soap:Envelope>]])
        local SOAP = "http://schemas.xmlsoap.org/soap/envelope/"
        assert(e.tag == "soap:Envelope" and e.ns == SOAP)
        assert(e.attrs["xmlns:soap"] == SOAP and e.attrs.xmlns == "urn:default")
        local body = e.children[1]
        assert(body.tag == "soap:Body" and body.ns == SOAP)
        local get = body.children[1]
        assert(get.tag == "GetPrice" and get.ns == "urn:default" and get.attrs["xmlns:m"] == "urn:prices")
        local item, inner, none, unbound, after = table.unpack(get.children)
        assert(item.tag == "m:Item" and item.ns == "urn:prices" and item.children[1] == "Apples")
        assert(inner.ns == "urn:inner" and inner.children[1].tag == "deep" and inner.children[1].ns == "urn:inner")
        assert(inner.children[2].tag == "m:x" and inner.children[2].ns == "urn:other")
        assert(none.ns == nil and none.children[1].ns == nil, "xmlns='' undeclares the default namespace")
        assert(unbound.tag == "u:unbound" and unbound.ns == nil, "an unbound prefix has no ns")
        assert(after.ns == "urn:default", "declarations end with their element")
        assert(e.children[2].tag == "xml:lang" and e.children[2].ns == "http://www.w3.org/XML/1998/namespace")
        """)
        // Redefinition on an empty element ends with it; the sibling sees the outer binding.
        XCTAssertEqual(view("<a xmlns:p='u1'><p:b xmlns:p='u2'/><p:c/></a>"), "a{xmlns:p=u1}(p:b[u2]{xmlns:p=u2},p:c[u1])")
        XCTAssertEqual(view("<p:a xmlns:p='u1'/>"), "p:a[u1]{xmlns:p=u1}")
        XCTAssertEqual(view("<a xmlns='d'><b xmlns=''/><c/></a>"), "a[d]{xmlns=d}(b{xmlns=},c[d])")
        // "xmlns:" (no prefix after the colon) declares nothing: an ordinary attribute.
        XCTAssertEqual(view("<r xmlns:='urn:p' xmlns='urn:r'/>"), "r[urn:r]{xmlns=urn:r,xmlns:=urn:p}")
        XCTAssertEqual(view("<r xmlns='urn:r' xmlns:='urn:p'/>"), "r[urn:r]{xmlns=urn:r,xmlns:=urn:p}")
        roundTrip(Array("<r xmlns='urn:r' xmlns:='urn:p'><p:x/></r>".utf8), .init())
        // Many declarations in scope and their undoing.
        lua("""
        local open, close = {}, {}
        for i = 1, 300 do
          open[#open + 1] = string.format('<e%d xmlns:p="u%d" xmlns="d%d">', i, i, i)
          close[#close + 1] = string.format("<p:x/></e%d>", 301 - i)
        end
        local e = xml.decode(table.concat(open) .. table.concat(close))
        local depth = 0
        local cur = e
        while cur do
          depth = depth + 1
          assert(cur.ns == "d" .. depth)
          local x = cur.children[#cur.children]
          assert(x.tag == "p:x" and x.ns == "u" .. depth, depth)
          cur = cur.children[1].tag ~= "p:x" and cur.children[1] or nil
        end
        assert(depth == 300)
        """)
    }

    func testEntitiesAndCharacterReferences() {
        XCTAssertEqual(view("<a>&lt;&gt;&amp;&quot;&apos;</a>"), #"a("<>&\"'")"#)
        XCTAssertEqual(view("<a>x&#65;&#x42;&#x63;&#233;&#x20AC;&#x1F600;y</a>"), "a(\"xABcé€😀y\")")
        XCTAssertEqual(view("<a v='&lt;&#9;&#10;&#13;&amp;&#x41;'/>"), "a{v=<\\t\\n\\r&A}")
        XCTAssertEqual(view("<a>&#32;</a>"), "a(\" \")", "a reference is content, not formatting")
        XCTAssertEqual(view("<a>&#x00000041;</a>"), "a(\"A\")")
        XCTAssertEqual(failure("<a>&#0;</a>"), "invalid character reference '&#0;' (U+0000 is not allowed in XML) at line 1, column 4 (byte 4)")
        XCTAssertEqual(failure("<a>&#x1;</a>"), "invalid character reference '&#x1;' (U+0001 is not allowed in XML) at line 1, column 4 (byte 4)")
        XCTAssertEqual(failure("<a>&#xD800;</a>"), "invalid character reference '&#xD800;' (U+D800 is not allowed in XML) at line 1, column 4 (byte 4)")
        XCTAssertEqual(failure("<a>&#xFFFE;</a>"), "invalid character reference '&#xFFFE;' (U+FFFE is not allowed in XML) at line 1, column 4 (byte 4)")
        XCTAssertEqual(failure("<a>&#x110000;</a>"), "invalid character reference '&#x110000;' (beyond U+10FFFF) at line 1, column 4 (byte 4)")
        XCTAssertEqual(failure("<a>&#99999999999999999999;</a>"), "invalid character reference '&#99999999999999999999;' (beyond U+10FFFF) at line 1, column 4 (byte 4)")
        XCTAssertEqual(failure("<a>&#x;</a>"), "malformed character reference (expected '&#' digits ';' or '&#x' hex digits ';') at line 1, column 4 (byte 4)")
        XCTAssertEqual(failure("<a>&#12a;</a>"), "malformed character reference (expected '&#' digits ';' or '&#x' hex digits ';') at line 1, column 4 (byte 4)")
        XCTAssertEqual(failure("<a>&#X41;</a>"), "malformed character reference (expected '&#' digits ';' or '&#x' hex digits ';') at line 1, column 4 (byte 4)")
        XCTAssertEqual(failure("<a>&nbsp;</a>"), "unknown entity '&nbsp;' (XML defines only &lt; &gt; &amp; &quot; &apos; and character references) at line 1, column 4 (byte 4)")
        XCTAssertEqual(failure("<a t='&copy;'/>"), "unknown entity '&copy;' (XML defines only &lt; &gt; &amp; &quot; &apos; and character references) at line 1, column 7 (byte 7)")
        XCTAssertEqual(failure("<a>fish & chips</a>"), "'&' not followed by an entity or character reference (write &amp;) at line 1, column 9 (byte 9)")
        XCTAssertEqual(failure("<a>&amp</a>"), "'&' not followed by an entity or character reference (write &amp;) at line 1, column 4 (byte 4)")
        XCTAssertEqual(failure("<a>&LT;</a>"), "unknown entity '&LT;' (XML defines only &lt; &gt; &amp; &quot; &apos; and character references) at line 1, column 4 (byte 4)")
    }

    func testBillionLaughsIsInert() {
        let declarations = (1...9).map { i in
            "  <!ENTITY lol\(i) \"" + String(repeating: "&lol\(i - 1);", count: 10) + "\">"
        }.joined(separator: "\n")
        let doctype = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n  <!ENTITY lol0 \"lol\">\n  <!ELEMENT lolz (#PCDATA)>\n\(declarations)\n  <!-- a comment ] > -->\n  <?pi ]>?>\n  <!ATTLIST lolz a CDATA \"]>\">\n  %pe;\n]>\n"
        // Referenced: an error naming the entity, at once.
        let start = Date()
        XCTAssertEqual(failure(doctype + "<lolz>&lol9;</lolz>"),
                       "unknown entity '&lol9;' (entities declared in a DOCTYPE are not expanded) at line 19, column 7 (byte \(doctype.utf8.count + 7))")
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.5)
        // Declared but not referenced: the document decodes, the DOCTYPE has no effect (no
        // default attributes either).
        XCTAssertEqual(view(doctype + "<lolz>lol</lolz>"), "lolz(\"lol\")")
        // External DTDs are never fetched.
        XCTAssertEqual(view("<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Strict//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd\"><html/>"), "html")
        XCTAssertEqual(view("<!DOCTYPE a SYSTEM 'file:///etc/passwd'><a>x</a>"), "a(\"x\")")
        XCTAssertEqual(failure("<!DOCTYPE a [<!ENTITY xxe SYSTEM 'file:///etc/passwd'>]><a>&xxe;</a>"),
                       "unknown entity '&xxe;' (entities declared in a DOCTYPE are not expanded) at line 1, column 60 (byte 60)")
        XCTAssertEqual(failure("<!DOCTYPE a><!DOCTYPE a><a/>"), "DOCTYPE appears twice (a document has at most one) at line 1, column 13 (byte 13)")
        XCTAssertEqual(failure("<a/><!DOCTYPE a>"), "DOCTYPE after the root element (it must come before it) at line 1, column 5 (byte 5)")
        XCTAssertEqual(failure("<a><!DOCTYPE a></a>"), "DOCTYPE inside an element (it must come before the root element) at line 1, column 4 (byte 4)")
        XCTAssertEqual(failure("<!DOCTYPE a [<!ENTITY x 'y'>"), "unexpected end of input (expected ']' to end the DOCTYPE's internal subset) at line 1, column 29 (byte 29)")
        XCTAssertEqual(failure("<!DOCTYPE a [ junk ]><a/>"), "unexpected character 'j' (expected a markup declaration or ']' in the DOCTYPE) at line 1, column 15 (byte 15)")
    }

    func testCDATA() {
        XCTAssertEqual(view("<a><![CDATA[<b>&amp; ]] ]>]]></a>"), "a(\"<b>&amp; ]] ]>\")")
        XCTAssertEqual(view("<a>x<![CDATA[y]]>z</a>"), "a(\"xyz\")", "text and CDATA together are one string")
        XCTAssertEqual(view("<a>  <![CDATA[  ]]>  </a>"), "a(\"      \")", "whitespace in CDATA is content")
        XCTAssertEqual(view("<a>\n  <![CDATA[]]>\n</a>"), "a", "an empty CDATA section adds nothing")
        XCTAssertEqual(view("<a><![CDATA[line\r\nnext\rlast]]></a>"), "a(\"line\\nnext\\nlast\")")
        XCTAssertEqual(view("<a><![CDATA[]]></a>"), "a")
        XCTAssertEqual(view("<a><![CDATA[é😀]]><b/><![CDATA[x]]></a>"), "a(\"é😀\",b,\"x\")")
        XCTAssertEqual(failure("<a><![CDATA[x]]</a>"), "unexpected end of input (expected ']]>' to close the CDATA section) at line 1, column 20 (byte 20)")
        XCTAssertEqual(failure("<![CDATA[x]]><a/>"), "CDATA section outside the root element at line 1, column 1 (byte 1)")
        XCTAssertEqual(failure("<a/><![CDATA[x]]>"), "CDATA section outside the root element at line 1, column 5 (byte 5)")
        XCTAssertEqual(failure("<a><![CDATA[\u{1}]]></a>"), "invalid character U+0001 (not allowed in XML) at line 1, column 13 (byte 13)")
        XCTAssertEqual(failure("<a>x]]>y</a>"), "']]>' in text (write ]]&gt;) at line 1, column 5 (byte 5)")
        XCTAssertEqual(view("<a>x]]y]>z]</a>"), "a(\"x]]y]>z]\")")
    }

    func testCommentsAndProcessingInstructionsAreSkipped() {
        let doc = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <!-- before -->
        <?xml-stylesheet type="text/xsl" href="style.xsl"?>
        <a><!-- inside -->x<!-- split -->y<?pi data?>z<?empty?><b><!----></b></a>
        <!-- after --><?after?>

        """
        XCTAssertEqual(view(doc), "a(\"xyz\",b)")
        XCTAssertEqual(view("<a>x<!-- <b>not an element</b> -->y</a>"), "a(\"xy\")")
        XCTAssertEqual(view("<a>x &amp; <!-- c --> y</a>"), "a(\"x &  y\")")
        XCTAssertEqual(failure("<a><!-- a -- b --></a>"), "'--' inside a comment at line 1, column 11 (byte 11)")
        XCTAssertEqual(failure("<a><!-- x ---></a>"), "'--' inside a comment at line 1, column 11 (byte 11)")
        XCTAssertEqual(failure("<a><!-- x"), "unexpected end of input (expected '-->' to close the comment) at line 1, column 10 (byte 10)")
        XCTAssertEqual(failure("<a><?pi x"), "unexpected end of input (expected '?>' to close the processing instruction) at line 1, column 10 (byte 10)")
        XCTAssertEqual(failure("<a><?xml version='1.0'?></a>"), "an XML declaration ('<?xml ...?>') is allowed only at the very start of the document at line 1, column 4 (byte 4)")
        XCTAssertEqual(failure(" <?xml version='1.0'?><a/>"), "an XML declaration ('<?xml ...?>') is allowed only at the very start of the document at line 1, column 2 (byte 2)")
        XCTAssertEqual(failure("<a><? x?></a>"), "unexpected space (expected a processing instruction target after '<?') at line 1, column 6 (byte 6)")
        XCTAssertEqual(failure("<a><!x></a>"), "unexpected character 'x' (expected '--' or '[CDATA[' after '<!') at line 1, column 6 (byte 6)")
    }

    func testWhitespaceRules() {
        let doc = "<a>\n  <b> x </b>\n  <c>  </c>\n  <d>\n  </d>\t<e/>\r\n</a>"
        XCTAssertEqual(view(doc), "a(b(\" x \"),c,d,e)")
        XCTAssertEqual(view(doc, keepWhitespace: true), "a(\"\\n  \",b(\" x \"),\"\\n  \",c(\"  \"),\"\\n  \",d(\"\\n  \"),\"\\t\",e,\"\\n\")")
        lua("""
        local e = xml.decode("<a> <b/> </a>", { keep_whitespace = true })
        assert(#e.children == 3 and e.children[1] == " " and e.children[3] == " ")
        assert(#xml.decode("<a> <b/> </a>").children == 1)
        assert(#xml.decode("<a> <b/> </a>", { keep_whitespace = false }).children == 1)
        """)
        // Text that is not only whitespace is kept whole, whitespace and all.
        XCTAssertEqual(view("<a>\n  text\n  <b/>\n</a>"), "a(\"\\n  text\\n  \",b)")
        // Line ends are normalized to LF, in text and whitespace.
        XCTAssertEqual(view("<a>one\r\ntwo\rthree\n\rfour</a>"), "a(\"one\\ntwo\\nthree\\n\\nfour\")")
        XCTAssertEqual(view("<a>\r\n<b/>\r</a>", keepWhitespace: true), "a(\"\\n\",b,\"\\n\")")
        // Attribute values: literal tab, LF, CR (and CR LF) become spaces; references stay.
        XCTAssertEqual(view("<a v=\"x\ty\nz\r\nw\rq\"/>"), "a{v=x y z w q}")
        XCTAssertEqual(view("<a v=\"&#9;&#10;\"/>"), "a{v=\\t\\n}")
        // Whitespace around the root is never a child.
        XCTAssertEqual(view("\n\n  <a/>  \n", keepWhitespace: true), "a")
    }

    func testDeclarationAndEncoding() {
        XCTAssertEqual(view("<?xml version=\"1.0\"?><a/>"), "a")
        XCTAssertEqual(view("<?xml version='1.1' encoding='utf-8'?><a/>"), "a")
        XCTAssertEqual(view("<?xml version = \"1.0\" encoding = \"UTF-8\" standalone = 'no' ?>\n<a/>"), "a")
        XCTAssertTrue(decodeBytes([0xEF, 0xBB, 0xBF] + Array("<?xml version='1.0'?><a>é</a>".utf8)).ok, "a UTF-8 BOM is skipped")
        XCTAssertEqual(failure("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a/>"),
                       "the document declares encoding \"ISO-8859-1\", but xml.decode reads UTF-8 only: convert the body to UTF-8 first (as r.text does) and decode it with { ignore_encoding = true } at line 1, column 31 (byte 31)")
        XCTAssertTrue(failure("<?xml version='1.0' encoding='Shift_JIS'?><a/>").hasPrefix("the document declares encoding \"Shift_JIS\""))
        var ignoring = LuaXMLDecoder.Options()
        ignoring.ignoreEncoding = true
        XCTAssertEqual(decode("<?xml version='1.0' encoding='Shift_JIS'?><a>日本</a>", options: ignoring).message, "a(\"日本\")")
        XCTAssertEqual(lua("return xml.decode([[<?xml version='1.0' encoding='EUC-JP'?><a>x</a>]], { ignore_encoding = true }).children[1]"), "x")
        // US-ASCII is read as it is, while every byte is ASCII.
        XCTAssertEqual(view("<?xml version='1.0' encoding='us-ascii'?><a>plain</a>"), "a(\"plain\")")
        XCTAssertEqual(failure("<?xml version='1.0' encoding='US-ASCII'?><a>é</a>"),
                       "byte 0xC3 is not US-ASCII, the encoding the document declares: convert the body to UTF-8 first (as r.text does) and decode it with { ignore_encoding = true } at line 1, column 45 (byte 45)")
        // UTF-16: a BOM or the zero bytes around '<'.
        XCTAssertEqual(failure(bytes: [0xFF, 0xFE, 0x3C, 0x00, 0x61, 0x00]), "the document is UTF-16 (a UTF-16 byte order mark): convert the body to UTF-8 first (as r.text does) at line 1, column 1 (byte 1)")
        XCTAssertTrue(failure(bytes: [0xFE, 0xFF, 0x00, 0x3C]).hasPrefix("the document is UTF-16"))
        XCTAssertTrue(failure(bytes: [0x00, 0x3C, 0x00, 0x61]).hasPrefix("the document is UTF-16"))
        XCTAssertTrue(failure(bytes: [0x3C, 0x00, 0x61, 0x00]).hasPrefix("the document is UTF-16"))
        // Malformed declarations.
        XCTAssertEqual(failure("<?xml?><a/>"), "malformed XML declaration (the version is missing) at line 1, column 1 (byte 1)")
        XCTAssertEqual(failure("<?xml encoding='UTF-8'?><a/>"), "malformed XML declaration (the version must come first) at line 1, column 7 (byte 7)")
        XCTAssertEqual(failure("<?xml version='2.0'?><a/>"), "malformed XML declaration (the version must be 1.x) at line 1, column 16 (byte 16)")
        XCTAssertEqual(failure("<?xml version='1.0' standalone='maybe'?><a/>"), "malformed XML declaration (standalone must be \"yes\" or \"no\") at line 1, column 33 (byte 33)")
        XCTAssertEqual(failure("<?xml version='1.0' standalone='yes' encoding='UTF-8'?><a/>"),
                       "malformed XML declaration (version, encoding and standalone must come once each, in that order) at line 1, column 38 (byte 38)")
        XCTAssertEqual(failure("<?xml version='1.0' foo='x'?><a/>"), "malformed XML declaration (expected version, encoding or standalone) at line 1, column 21 (byte 21)")
        XCTAssertEqual(failure("<?xml version='1.0'encoding='UTF-8'?><a/>"), "unexpected character 'e' (expected whitespace or '?>' in the XML declaration) at line 1, column 20 (byte 20)")
        XCTAssertEqual(failure("<?xml version='1.0' encoding='8bit'?><a/>"), "malformed XML declaration (not an encoding name) at line 1, column 31 (byte 31)")
        XCTAssertEqual(failure("<?xml version='1.0'"), "unexpected end of input (expected '?>' to end the XML declaration) at line 1, column 20 (byte 20)")
    }

    // MARK: errors

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
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ n: Int) -> Int {
            seed ^= seed << 13
            seed ^= seed >> 7
            seed ^= seed << 17
            return Int(seed % UInt64(n))
        }
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

    /// Decodes, encodes (plain and pretty), decodes again: the same tables.
    private func roundTrip(_ bytes: [UInt8], _ options: LuaXMLDecoder.Options, file: StaticString = #filePath, line: UInt = #line) {
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

    // MARK: the slideshow (like httpbin's /xml)

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

    func testSlideshow() {
        XCTAssertEqual(view(Self.slideshow),
                       "slideshow{author=The Team,date=Spring,title=Lunet in Ten Minutes}(slide{type=all}(title(\"Hello, Lunet!\")),"
                       + "slide{type=all}(title(\"Agenda\"),item(\"Why \",em(\"tasks\"),\" beat callbacks\"),item,item(\"How \",em(\"sessions\"),\" share a pool\")))")
        lua("""
        local s = xml.decode([==[\(Self.slideshow)]==])
        assert(s.attrs.title == "Lunet in Ten Minutes" and #s.children == 2)
        local agenda = s.children[2]
        assert(agenda.children[1].children[1] == "Agenda")
        assert(agenda.children[2].children[2].tag == "em" and agenda.children[2].children[2].children[1] == "tasks")
        local again = xml.decode(xml.encode(s))
        assert(deq(s, again))
        assert(deq(s, xml.decode(xml.encode(s, { pretty = true, declaration = true }))))
        """)
    }

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

    // MARK: encoding

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

    func testEncodeNamespaces() {
        // Decoded tables carry their xmlns attributes: nothing is added.
        XCTAssertEqual(lua("return xml.encode(xml.decode([[<s:E xmlns:s='urn:s'><s:B/><x xmlns='urn:d'><y/></x></s:E>]]))"),
                       #"<s:E xmlns:s="urn:s"><s:B/><x xmlns="urn:d"><y/></x></s:E>"#)
        // Built tables: ns is declared where it is not in scope yet, once.
        XCTAssertEqual(lua("""
        local SOAP = "http://schemas.xmlsoap.org/soap/envelope/"
        return xml.encode({ tag = "soap:Envelope", ns = SOAP, children = {
          { tag = "soap:Body", ns = SOAP, children = {
            { tag = "GetPrice", ns = "urn:prices", children = { { tag = "Item", ns = "urn:prices", children = { "Apples" } } } },
            { tag = "Other", ns = "urn:other" },
          } } } })
        """), #"<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetPrice xmlns="urn:prices"><Item>Apples</Item></GetPrice><Other xmlns="urn:other"/></soap:Body></soap:Envelope>"#)
        // A declaration the encoder adds is sorted with the other attributes.
        XCTAssertEqual(lua("return xml.encode({ tag = 'p:a', ns = 'urn:p', attrs = { z = '1', a = '2' } })"), #"<p:a a="2" xmlns:p="urn:p" z="1"/>"#)
        // The element's own declaration agreeing is fine; disagreeing is an error.
        XCTAssertEqual(lua("return xml.encode({ tag = 'p:a', ns = 'urn:p', attrs = { ['xmlns:p'] = 'urn:p' } })"), #"<p:a xmlns:p="urn:p"/>"#)
        XCTAssertEqual(luaError("xml.encode({ tag = 'r', children = { { tag = 'p:a', ns = 'urn:p', attrs = { ['xmlns:p'] = 'urn:q' } } } })")?.message,
                       #"cannot encode ns "urn:p": the element's attribute xmlns:p declares "urn:q" at $.children[1].ns"#)
        // A redefinition in a child, and the outer one again for its sibling.
        XCTAssertEqual(lua("return xml.encode({ tag = 'a', ns = 'u1', children = { { tag = 'b', ns = 'u2', children = { { tag = 'c', ns = 'u2' } } }, { tag = 'd', ns = 'u1' } } })"),
                       #"<a xmlns="u1"><b xmlns="u2"><c/></b><d/></a>"#)
        XCTAssertEqual(lua("return xml.encode({ tag = 'xml:x', ns = 'http://www.w3.org/XML/1998/namespace' })"), "<xml:x/>")
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

    func testRoundTripDocuments() {
        for doc in [Self.slideshow, Self.dense, "<a/>", "<a>x</a>", "<a b='&lt;'>&amp;<c/>&#x1F600;</a>"] {
            roundTrip(Array(doc.utf8), .init())
            var keep = LuaXMLDecoder.Options()
            keep.keepWhitespace = true
            roundTrip(Array(doc.utf8), keep)
        }
        // keep_whitespace and a plain encode give back the document's text exactly, when it
        // is written the way the encoder writes.
        let canonical = "<r a=\"1\" b=\"x &amp; y\">\n  <c>t &lt; u</c>\n  <d/>\n</r>"
        var keep = LuaXMLDecoder.Options()
        keep.keepWhitespace = true
        let top = lua_gettop(L)
        XCTAssertEqual(Array(canonical.utf8).withUnsafeBytes { XMLModule.decode(L, $0, options: keep) }, 1)
        let out = ByteBuffer()
        XCTAssertNil(LuaXMLEncoder.encode(L, index: -1, options: .init(), into: out))
        XCTAssertEqual(out.string, canonical)
        lua_settop(L, top)
    }
}
