import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// Decoding: element tables, entities and references, CDATA, skipped markup, whitespace, the declaration.
final class XMLDecodeTests: XMLCodecTestCase {
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
}
