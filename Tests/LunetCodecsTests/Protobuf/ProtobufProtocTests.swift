import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// With a schema, against Debian's protoc: what it encodes decodes, what we encode it reads, byte for byte.
final class ProtobufProtocTests: ProtobufCodecTestCase {
    func testProtocIsInstalled() {
        XCTAssertNotNil(Self.findProtoc(), ProtocMissing().description)
    }

    func testDecodesWhatProtocEncodes() throws {
        try loadSchema()
        setGlobal("BYTES", try encodeWithProtoc("everything.txt"))
        lua(#"""
        local v = schema:decode(BYTES, "lunet.test.Everything")
        local s = v.scalars
        assert(s.d == 0.1 and math.type(s.d) == "float")
        assert(s.f == 1.5 and math.type(s.f) == "float")
        assert(s.i32 == -1 and s.i64 == math.mininteger)
        assert(s.u32 == 4294967295 and s.u64 == -1)      -- 2^64 - 1 reinterpreted
        assert(s.s32 == -2147483648 and s.s64 == math.maxinteger)
        assert(s.fx32 == 4294967295 and s.fx64 == -1)
        assert(s.sfx32 == -2147483648 and s.sfx64 == math.mininteger)
        assert(s.b == true and s.s == "héllo ✓" and s.by == "\0\255bytes" and s.color == "BLUE")
        assert(deq(v.packed_ints, { 1, -1, 150, 2147483647 }))
        assert(deq(v.unpacked_ints, { 3, 270, 86942 }))
        assert(deq(v.packed_doubles, { 1.25, -0.5, 1e300 }))
        assert(deq(v.packed_sints, { -1, 1, math.mininteger }))
        assert(deq(v.colors, { "RED", "GREEN", "BLUE" }))
        assert(deq(v.names, { "a", "", "çé" }))
        assert(deq(v.items, { { id = 1, name = "one", tags = { "x", "y" } }, { id = 2, name = "two" }, {} }))
        assert(deq(v.counts, { apples = 3 }))
        assert(deq(v.items_by_id, { [-5] = { id = -5, name = "neg" } }))
        assert(deq(v.flags, { [true] = "yes" }))
        assert(v.number == 1234567890123 and v.text == nil and v.item == nil)
        assert(v.maybe == 0)                              -- proto3 optional: present even when zero
        assert(v.inner.label == "outer" and v.inner.next.next.label == "innermost")
        assert(deq(v.old, { count = 7, values = { 1, 2, 3 }, packed_values = { 4, 5 }, kind = "FIRST", flag = false, blob = "\1\2" }))
        assert(deq(v.packed_fixed, { 0, 1, 4294967295 }))
        assert(deq(v.color_map, { [7] = "GREEN" }))
        assert(deq(v.blobs, { "\1\2\3", "" }))
        assert(v.last == 99)
        """#)
    }

    func testEncodesByteForByteAsProtoc() throws {
        try loadSchema()
        let reference = try encodeWithProtoc("everything.txt")
        setGlobal("BYTES", reference)
        // What was decoded encodes back to the same bytes.
        lua(#"""
        OUT = schema:encode(schema:decode(BYTES, "lunet.test.Everything"), "lunet.test.Everything")
        """#)
        XCTAssertEqual(global("OUT"), reference)
        // So does the same message written by hand, with numbers for enums and floats for integers.
        lua(#"""
        OUT = schema:encode({
          scalars = { d = 0.1, f = 1.5, i32 = -1, i64 = math.mininteger, u32 = 4294967295, u64 = -1,
                      s32 = -2147483648, s64 = math.maxinteger, fx32 = 4294967295, fx64 = -1, sfx32 = -2147483648,
                      sfx64 = math.mininteger, b = true, s = "héllo ✓", by = "\0\255bytes", color = 3 },
          packed_ints = { 1, -1, 150.0, 2147483647 }, unpacked_ints = { 3, 270, 86942 },
          packed_doubles = { 1.25, -0.5, 1e300 }, packed_sints = { -1, 1, math.mininteger },
          colors = { "RED", 2, "BLUE" }, names = { "a", "", "çé" },
          items = { { id = 1, name = "one", tags = { "x", "y" } }, { id = 2, name = "two" }, {} },
          counts = { apples = 3 }, items_by_id = { [-5] = { id = -5, name = "neg" } }, flags = { [true] = "yes" },
          number = 1234567890123, maybe = 0,
          inner = { label = "outer", next = { label = "inner", next = { label = "innermost" } } },
          old = { count = 7, values = { 1, 2, 3 }, packed_values = { 4, 5 }, kind = "FIRST", flag = false, blob = "\1\2" },
          packed_fixed = { 0, 1, 4294967295 }, color_map = { [7] = "GREEN" }, blobs = { "\1\2\3", "" }, last = 99,
        }, "lunet.test.Everything")
        """#)
        XCTAssertEqual(global("OUT"), reference)
        // protoc reads what lunet writes.
        XCTAssertEqual(try decodeWithProtoc(global("OUT") ?? []), try decodeWithProtoc(reference))
    }

    func testMapsAgainstProtoc() throws {
        try loadSchema()
        let reference = try encodeWithProtoc("maps.txt")
        setGlobal("BYTES", reference)
        lua(#"""
        local v = schema:decode(BYTES, "lunet.test.Everything")
        assert(deq(v.counts, { apples = 3, pears = 0, [""] = -7, zebra = 1 }))
        assert(deq(v.items_by_id, { [3] = { id = 3, name = "three" }, [-1] = { id = -1 }, [100000000000] = {} }))
        assert(deq(v.flags, { [true] = "yes", [false] = "no" }))
        assert(deq(v.color_map, { [1] = "RED", [4294967295] = "BLUE", [2] = "COLOR_UNSPECIFIED" }))
        assert(deq(v.item, { id = 9, name = "chosen" }))
        OUT = schema:encode(v, "lunet.test.Everything")
        assert(deq(schema:decode(OUT, "lunet.test.Everything"), v))
        -- entries are written in key order, so the bytes do not depend on the table's order
        assert(schema:encode({ counts = { b = 1, a = 2, c = 3 } }, "lunet.test.Everything") ==
               unhex("4a050a0161 1002 4a050a0162 1001 4a050a0163 1003"))
        -- a missing key or value in an entry reads as the type's default
        local m = schema:decode(unhex("4a00 5200 5a00 9a0100"), "lunet.test.Everything")
        assert(deq(m, { counts = { [""] = 0 }, items_by_id = { [0] = {} }, flags = { [false] = "" }, color_map = { [0] = "COLOR_UNSPECIFIED" } }))
        """#)
        XCTAssertEqual(try decodeWithProtoc(global("OUT") ?? []), try decodeWithProtoc(reference))
    }

    func testProtocReadsHandWrittenMessages() throws {
        try loadSchema()
        lua(#"""
        OUT = schema:encode({ scalars = { s = "x", i32 = 0, b = false, color = "COLOR_UNSPECIFIED", d = -0.0 },
                              text = "chosen", old = { flag = true, kind = 2, title = "t" } }, "lunet.test.Everything")
        """#)
        let text = try decodeWithProtoc(global("OUT") ?? [])
        // proto3 zeros are not written (but -0.0 is: it is not zero bits); proto2 fields are written when set.
        XCTAssertEqual(text, """
        scalars {
          d: -0
          s: "x"
        }
        text: "chosen"
        old {
          title: "t"
          kind: SECOND
          flag: true
        }

        """)
    }

    func testLargeMessageRoundTrip() throws {
        try loadSchema()
        lua(#"""
        local items = {}
        for i = 1, 20000 do
          items[i] = { id = i, name = "item number " .. i, tags = { "a", "b", tostring(i) } }
        end
        local msg = { items = items, packed_ints = {}, counts = {} }
        for i = 1, 20000 do msg.packed_ints[i] = i * 7919 - 50000; msg.counts["k" .. i] = i end
        local b = schema:encode(msg, "lunet.test.Everything")
        assert(#b > 600000, #b)
        assert(deq(schema:decode(b, "lunet.test.Everything"), msg))
        assert(protobuf.encode(protobuf.decode(b)) == b)
        """#)
    }
}
