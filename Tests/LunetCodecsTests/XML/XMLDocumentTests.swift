import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// Whole documents (a slideshow like httpbin's /xml, a dense one) decoded and round-tripped.
final class XMLDocumentTests: XMLCodecTestCase {
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
