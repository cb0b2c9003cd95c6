import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// Namespaces both ways: `ns` from prefixes in scope, declarations added when encoding.
final class XMLNamespaceTests: XMLCodecTestCase {
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
}
