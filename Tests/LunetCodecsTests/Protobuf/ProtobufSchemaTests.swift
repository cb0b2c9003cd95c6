import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// With a schema: scalar types, packed runs, oneofs, merging, enums, unknown fields, defaults, UTF-8, encode errors.
final class ProtobufSchemaTests: ProtobufCodecTestCase {
    func testScalarEdgesAndZigzag() throws {
        try loadSchema()
        lua(#"""
        local function rt(t) return schema:decode(schema:encode(t, "lunet.test.Scalars"), "lunet.test.Scalars") end
        -- zigzag: sint32 -1 is the varint 1, sint64 1 is 2
        assert(schema:encode({ s32 = -1 }, "lunet.test.Scalars") == unhex("3801"))
        assert(schema:encode({ s64 = 1 }, "lunet.test.Scalars") == unhex("4002"))
        -- a negative int32 is sign-extended to ten bytes, as protobuf writes it
        assert(schema:encode({ i32 = -1 }, "lunet.test.Scalars") == unhex("18ffffffffffffffffff01"))
        for _, x in ipairs{ 0, 1, -1, 63, -64, 64, 2147483647, -2147483648 } do assert(rt{ s32 = x }.s32 == (x ~= 0 and x or nil)) end
        for _, x in ipairs{ 1, -1, math.maxinteger, math.mininteger } do assert(rt{ s64 = x }.s64 == x) end
        assert(rt{ f = 0.1 }.f == 0.10000000149011612)   -- float precision
        assert(rt{ d = 1/0 }.d == 1/0)
        local nan = rt{ d = 0/0 }.d
        assert(nan ~= nan)
        assert(rt{ u64 = 2^63 }.u64 == math.mininteger)    -- a float up to 2^64 for the unsigned 64-bit types
        -- varints of every length
        for bits = 0, 63 do
          local x = 1 << bits
          assert(rt{ i64 = x }.i64 == x and rt{ u64 = x }.u64 == x and rt{ i64 = -x }.i64 == -x)
        end
        -- a non-canonical (over-long) varint still decodes
        assert(schema:decode(unhex("18 8180808000"), "lunet.test.Scalars").i32 == 1)
        -- int32 from a 64-bit varint keeps the low 32 bits, as protobuf does
        assert(schema:decode(unhex("18 ffffffff0f"), "lunet.test.Scalars").i32 == -1)
        assert(schema:decode(unhex("6802"), "lunet.test.Scalars").b == true)
        """#)
    }

    func testPackedAndUnpackedAreBothAccepted() throws {
        try loadSchema()
        lua(#"""
        -- packed_ints (2) unpacked, unpacked_ints (3) packed, and runs mixed: all append in order
        local v = schema:decode(unhex("1001 1002 1a020304 1203050607 1808"), "lunet.test.Everything")
        assert(deq(v.packed_ints, { 1, 2, 5, 6, 7 }), hex(schema:encode(v, "lunet.test.Everything")))
        assert(deq(v.unpacked_ints, { 3, 4, 8 }))
        -- written as declared: packed_ints packed, unpacked_ints not
        assert(schema:encode(v, "lunet.test.Everything") == unhex("12050102050607 1803 1804 1808"))
        -- proto2 repeated are unpacked unless [packed = true]
        assert(schema:encode({ flag = true, values = { 1, 2 }, packed_values = { 3, 4 } }, "legacy.Old") == unhex("1801 1802 22020304 3801"))
        -- an empty list writes nothing
        assert(schema:encode({ packed_ints = {}, names = {} }, "lunet.test.Everything") == "")
        """#)
    }

    func testOneofKeepsTheLastMemberAndEncodeRefusesTwo() throws {
        try loadSchema()
        lua(#"""
        local b = schema:encode({ text = "a" }, "lunet.test.Everything") .. schema:encode({ number = 5 }, "lunet.test.Everything")
        local v = schema:decode(b, "lunet.test.Everything")
        assert(v.number == 5 and v.text == nil)
        v = schema:decode(b .. schema:encode({ item = { id = 1 } }, "lunet.test.Everything"), "lunet.test.Everything")
        assert(v.number == nil and v.item.id == 1)
        -- a oneof member set to its zero value is still written (it says which member is set)
        assert(schema:encode({ number = 0 }, "lunet.test.Everything") == unhex("6800"))
        """#)
        let e = luaError(#"schema:encode({ text = "a", item = {} }, "lunet.test.Everything")"#)
        XCTAssertEqual(e?.kind, "argument")
        XCTAssertEqual(e?.message, "protobuf: cannot encode both 'text' and 'item' of oneof 'choice' in lunet.test.Everything at $")
    }

    func testNestedMessagesThatRepeatAreMerged() throws {
        try loadSchema()
        lua(#"""
        local a = schema:encode({ scalars = { i32 = 1, s = "x" } }, "lunet.test.Everything")
        local b = schema:encode({ scalars = { i32 = 2, b = true } }, "lunet.test.Everything")
        local v = schema:decode(a .. b, "lunet.test.Everything")
        assert(deq(v.scalars, { i32 = 2, s = "x", b = true }))
        """#)
    }

    func testEnumsKeepUnknownNumbers() throws {
        try loadSchema()
        lua(#"""
        local v = schema:decode(unhex("8001 07 3203 01 63 02"), "lunet.test.Scalars")
        assert(v.color == 7)
        v = schema:decode(unhex("32 03 01 63 02"), "lunet.test.Everything")
        assert(deq(v.colors, { "RED", 99, "GREEN" }))
        assert(schema:encode(v, "lunet.test.Everything") == unhex("32 03 01 63 02"))
        assert(schema:encode({ color = -1 }, "lunet.test.Scalars") == unhex("8001 ffffffffffffffffff01"))
        assert(schema:decode(unhex("8001 ffffffffffffffffff01"), "lunet.test.Scalars").color == -1)
        """#)
        let e = luaError(#"schema:encode({ colors = { "RED", "PURPLE" } }, "lunet.test.Everything")"#)
        XCTAssertEqual(e?.message, #"protobuf: cannot encode "PURPLE": not a value of lunet.test.Color at $.colors[2]"#)
    }

    func testUnknownFieldsAreKeptOrDropped() throws {
        try loadSchema()
        setGlobal("BYTES", try encodeWithProtoc("everything.txt"))
        lua(#"""
        local v = schema:decode(BYTES, "lunet.test.Subset")
        assert(v.scalars.s == "héllo ✓" and #v.items == 3)
        -- the fields Subset does not know are there under their numbers, as protobuf.decode gives them
        local raw = protobuf.decode(BYTES)
        for k, list in pairs(raw) do
          if k ~= 1 and k ~= 2 and k ~= 8 then assert(deq(v[k], list), k) end
        end
        assert(deq(v[18], { "\0\0\0\0\1\0\0\0\255\255\255\255" }))
        -- and encoding writes them back: the same message again
        local again = schema:encode(v, "lunet.test.Subset")
        assert(deq(schema:decode(again, "lunet.test.Everything"), schema:decode(BYTES, "lunet.test.Everything")))
        -- unknown = false drops them
        v = schema:decode(BYTES, "lunet.test.Subset", { unknown = false })
        for k in pairs(v) do assert(type(k) == "string", k) end
        -- a known field with another wire type than its type's is kept as unknown too
        v = schema:decode(unhex("0d01000000"), "lunet.test.Item")
        assert(v.id == nil and deq(v[1], { 1, wire = "fixed32" }))
        assert(schema:encode(v, "lunet.test.Item") == unhex("0d01000000"))
        """#)
    }

    /// A message field that comes twice is one message (merged), and an unknown field in it that
    /// mixes wire types keeps one wire name an occurrence across both: the second part's
    /// occurrences were left unnamed, and encoding what was decoded failed (found by fuzz-protobuf).
    func testUnknownFieldWireTypesAcrossAMergedMessage() throws {
        try loadSchema()
        lua(#"""
        -- scalars (field 1) twice; in it field 1 (d, a double) as a varint, a fixed32, then a varint
        local bytes = unhex("0a07" .. "0801" .. "0d01000000" .. "0a02" .. "0802")
        local v = schema:decode(bytes, "lunet.test.Everything")
        assert(deq(v.scalars[1], { 1, 1, 2, wire = { "varint", "fixed32", "varint" } }), "one wire name an occurrence")
        local again = schema:encode(v, "lunet.test.Everything")
        assert(deq(schema:decode(again, "lunet.test.Everything"), v), "and what was decoded encodes")
        -- the same with the mixed part second, and a length-delimited occurrence in between
        bytes = unhex("0a05" .. "0d02000000" .. "0a05" .. "0a0178" .. "0803")
        v = schema:decode(bytes, "lunet.test.Everything")
        assert(deq(v.scalars[1], { 2, "x", 3, wire = { "fixed32", "len", "varint" } }), "fixed32, len, varint")
        assert(deq(schema:decode(schema:encode(v, "lunet.test.Everything"), "lunet.test.Everything"), v))
        """#)
    }

    /// Lists that die during a decode (the unknown fields of map entries, dropped with the entry
    /// when it is stored) leave no wire state for a later list that gets their address: with
    /// the collector running all the time, 2,000 entries each with an unknown fixed32, then
    /// unknown varints at the top, come out as varints without a marker.
    func testADeadListsWireStateIsNotALaterListsAtTheSameAddress() throws {
        try loadSchema()
        lua(#"""
        local parts = {}
        for i = 1, 2000 do
          local key = string.format("k%05d", i)
          local entry = "\10\6" .. key .. "\16\1" .. "\29\1\0\0\0"   -- key, value, unknown 3 (fixed32)
          parts[#parts + 1] = "\74" .. string.char(#entry) .. entry             -- counts (9)
        end
        for i = 1, 50 do parts[#parts + 1] = "\160\6" .. string.char(i) end   -- unknown 100 (varint), i
        collectgarbage("incremental", 1, 1000)   -- collect all the time: dead lists' blocks come back
        local v = schema:decode(table.concat(parts), "lunet.test.Everything")
        collectgarbage("incremental", 200, 100)
        assert(v.counts.k00001 == 1 and v.counts.k02000 == 1, "the map")
        assert(#v[100] == 50 and v[100].wire == nil, "varints only: no marker, got " .. tostring(v[100].wire))
        """#)
    }

    func testDefaultsOption() throws {
        try loadSchema()
        lua(#"""
        local v = schema:decode("", "lunet.test.Scalars", { defaults = true })
        assert(deq(v, { d = 0.0, f = 0.0, i32 = 0, i64 = 0, u32 = 0, u64 = 0, s32 = 0, s64 = 0, fx32 = 0, fx64 = 0,
                        sfx32 = 0, sfx64 = 0, b = false, s = "", by = "", color = "COLOR_UNSPECIFIED" }))
        v = schema:decode("", "legacy.Old", { defaults = true })
        assert(deq(v, { count = 42, title = "untitled", values = {}, packed_values = {}, kind = "SECOND",
                        blob = "a\1\\b", flag = false, ratio = -1/0, big = -1 }))
        v = schema:decode("", "lunet.test.Everything", { defaults = true })
        assert(v.scalars == nil and v.text == nil and v.maybe == 0 and deq(v.counts, {}) and deq(v.items, {}))
        -- without the option, only what is on the wire
        assert(next(schema:decode("", "legacy.Old")) == nil)
        """#)
    }

    func testStringFieldsMustBeUTF8() throws {
        try loadSchema()
        var e = luaError(#"schema:decode(unhex("1203 61 ff 62"), "lunet.test.Item")"#)
        XCTAssertEqual(e?.kind, "decode")
        XCTAssertEqual(e?.message, "protobuf: invalid UTF-8 (byte 0xFF) in string field lunet.test.Item.name at byte 4")
        XCTAssertEqual(e?.position, 4)
        XCTAssertEqual(lua(#"return schema:decode(unhex("1203 61 ff 62"), "lunet.test.Scalars").by == nil"#), "true")
        e = luaError(#"schema:encode({ items = { {}, { tags = { "ok", "bad\192" } } } }, "lunet.test.Everything")"#)
        XCTAssertEqual(e?.kind, "argument")
        XCTAssertEqual(e?.message, "protobuf: cannot encode a string that is not valid UTF-8 (byte 0xC0 at offset 4) as string (use a bytes field for binary data) at $.items[2].tags[2]")
        XCTAssertEqual(lua(#"return hex(schema:encode({ by = "\255" }, "lunet.test.Scalars"))"#), "7a01ff")
    }

    func testEncodeErrorsNameThePath() throws {
        try loadSchema()
        func message(_ code: String, file: StaticString = #filePath, line: UInt = #line) -> String? {
            let e = luaError(code, file: file, line: line)
            XCTAssertEqual(e?.kind, "argument", file: file, line: line)
            return e?.message
        }
        XCTAssertEqual(message(#"schema:encode({ items = { { id = 1 }, { id = "2" } } }, "lunet.test.Everything")"#),
                       "protobuf: cannot encode a string as int32 at $.items[2].id")
        XCTAssertEqual(message(#"schema:encode({ items = { { id = 1 }, { id = 2^31 } } }, "lunet.test.Everything")"#),
                       "protobuf: cannot encode the float 2147483648.0 as int32 (out of range) at $.items[2].id")
        XCTAssertEqual(message(#"schema:encode({ scalars = { u32 = -1 } }, "lunet.test.Everything")"#),
                       "protobuf: cannot encode the integer -1 as uint32 (out of range) at $.scalars.u32")
        XCTAssertEqual(message(#"schema:encode({ scalars = { i64 = 1.5 } }, "lunet.test.Everything")"#),
                       "protobuf: cannot encode the float 1.5 as int64 (an integer expected) at $.scalars.i64")
        XCTAssertEqual(message(#"schema:encode({ scalars = { b = 1 } }, "lunet.test.Everything")"#),
                       "protobuf: cannot encode the integer 1 as bool at $.scalars.b")
        XCTAssertEqual(message(#"schema:encode({ inner = { next = { lable = "x" } } }, "lunet.test.Everything")"#),
                       #"protobuf: unknown field "lable" in lunet.test.Everything.Nested.Inner at $.inner.next.lable"#)
        XCTAssertEqual(message(#"schema:encode({ names = "x" }, "lunet.test.Everything")"#),
                       "protobuf: cannot encode a string as repeated string (a list expected) at $.names")
        XCTAssertEqual(message(#"schema:encode({ names = { "a", x = "b" } }, "lunet.test.Everything")"#),
                       #"protobuf: cannot encode a table with the key "x" as repeated string (a list with keys 1..n expected) at $.names"#)
        XCTAssertEqual(message(#"schema:encode({ names = { [1] = "a", [3] = "b" } }, "lunet.test.Everything")"#),
                       "protobuf: cannot encode a table with holes as repeated string (a list with keys 1..n expected) at $.names")
        XCTAssertEqual(message(#"schema:encode({ counts = { [1] = 2 } }, "lunet.test.Everything")"#),
                       "protobuf: cannot encode the key 1 in a map with string keys at $.counts")
        XCTAssertEqual(message(#"schema:encode({ items_by_id = { [7] = { name = false } } }, "lunet.test.Everything")"#),
                       "protobuf: cannot encode false as string at $.items_by_id[7].name")
        XCTAssertEqual(message(#"schema:encode({ counts = { ["a b"] = "x" } }, "lunet.test.Everything")"#),
                       #"protobuf: cannot encode a string as int32 at $.counts["a b"]"#)
        XCTAssertEqual(message(#"schema:encode({ scalars = print }, "lunet.test.Everything")"#),
                       "protobuf: cannot encode a function as lunet.test.Scalars at $.scalars")
        XCTAssertEqual(message(#"schema:encode({ [true] = 1 }, "lunet.test.Everything")"#),
                       "protobuf: cannot encode the key of type boolean in lunet.test.Everything (field names or unknown field numbers expected) at $")
        XCTAssertEqual(message(#"local t = {}; t.next = t; schema:encode({ inner = t }, "lunet.test.Everything")"#),
                       "protobuf: cannot encode a table that contains itself (a reference cycle) at $.inner.next")
        XCTAssertEqual(message(#"schema:encode({ old = { legacy = {} } }, "lunet.test.Everything")"#),
                       "protobuf: cannot encode the group field (groups are not supported) at $.old.legacy")
    }
}
