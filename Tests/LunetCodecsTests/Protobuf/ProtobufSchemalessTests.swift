import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// Without a schema: the shapes, guess, exact round trips, the Swift entry point.
final class ProtobufSchemalessTests: ProtobufCodecTestCase {
    func testSchemalessShapes() throws {
        lua(#"""
        -- 08 96 01: field 1, varint 150 (the example of the protobuf encoding guide)
        assert(deq(protobuf.decode(unhex("089601")), { [1] = { 150 } }))
        assert(deq(protobuf.decode(unhex("089601"), { single = true }), { [1] = 150 }))
        assert(deq(protobuf.decode(""), {}))
        -- fixed32 / fixed64 are their raw bits, the list says which
        local v = protobuf.decode(unhex("0d ffffffff 11 0000000000000080 1a03616263 1a00"))
        assert(deq(v, { [1] = { 4294967295, wire = "fixed32" }, [2] = { math.mininteger, wire = "fixed64" }, [3] = { "abc", "" } }))
        -- a varint is the unsigned 64 bits reinterpreted: -1 as int32/int64, 2^64-1 as uint64
        assert(protobuf.decode(unhex("08ffffffffffffffffff01"))[1][1] == -1)
        -- occurrences of one field stay in order, wherever they are
        assert(deq(protobuf.decode(unhex("0801 1002 0803")), { [1] = { 1, 3 }, [2] = { 2 } }))
        """#)
        lua(#"""
        -- integers of one field with different wire types: `wire` names each occurrence
        local v = protobuf.decode(unhex("0801 0d02000000 0a0178 110300000000000000"))
        assert(deq(v, { [1] = { 1, 2, "x", wire = { "varint", "fixed32", "len" } }, [2] = { 3, wire = "fixed64" } }))
        assert(protobuf.encode(v) == unhex("0801 0d02000000 0a0178 110300000000000000"))
        """#)
    }

    func testSchemalessGuess() throws {
        lua(#"""
        -- field 3 holds a message {1: "hi"}; field 2 holds text that would parse as a message
        local b = unhex("1a 04 0a026869") .. "\18\2hi"
        assert(deq(protobuf.decode(b), { [2] = { "hi" }, [3] = { "\10\2hi" } }))
        assert(deq(protobuf.decode(b, { guess = true }), { [2] = { "hi" }, [3] = { { [1] = { "hi" } } } }))
        assert(deq(protobuf.decode(b, { guess = true, single = true }), { [2] = "hi", [3] = { [1] = "hi" } }))
        assert(protobuf.encode(protobuf.decode(b, { guess = true })) == unhex("12026869 1a040a026869"))
        -- bytes that do not parse stay bytes; empty stays ""
        assert(deq(protobuf.decode(unhex("0a 02 ff01 0a00"), { guess = true }), { [1] = { "\255\1", "" } }))
        """#)
    }

    func testSchemalessRoundTripsAreExact() throws {
        let everything = try encodeWithProtoc("everything.txt")
        let maps = try encodeWithProtoc("maps.txt")
        for bytes in [everything, maps] {
            setGlobal("BYTES", bytes)
            lua(#"""
            OUT = protobuf.encode(protobuf.decode(BYTES))
            """#)
            XCTAssertEqual(global("OUT"), bytes)
        }
        lua(#"""
        -- the shorthand: a single value instead of a list, and floats with wire types
        assert(protobuf.encode({ [1] = 150, [2] = "x", [3] = true, [4] = { 1.5, wire = "fixed64" }, [5] = { 1.5, wire = "fixed32" },
                                 [6] = { { [1] = 2 } } }) == unhex("089601 120178 1801 21000000000000f83f 2d0000c03f 32020802"))
        assert(protobuf.encode({ [1] = { 3.0 } }) == unhex("0803"))
        """#)
        func message(_ code: String) -> String? {
            let e = luaError(code)
            XCTAssertEqual(e?.kind, "argument")
            return e?.message
        }
        XCTAssertEqual(message("protobuf.encode({ [1] = { 1, 2 }, [2] = { { [3] = { 1.5 } } } })"),
                       "protobuf: cannot encode the float 1.5 as a varint (a float needs wire = \"fixed64\" or \"fixed32\") at $[2][1][3][1]")
        XCTAssertEqual(message("protobuf.encode({ x = 1 })"),
                       "protobuf: cannot encode the key \"x\": message tables are keyed by field number (an integer from 1 to 536870911) at $")
        XCTAssertEqual(message("protobuf.encode({ [0] = 1 })"),
                       "protobuf: cannot encode the key 0: message tables are keyed by field number (an integer from 1 to 536870911) at $")
        XCTAssertEqual(message(#"protobuf.encode({ [1] = { 1, wire = "fixed16" } })"#),
                       "protobuf: cannot encode 'wire' = \"fixed16\" (expected \"varint\", \"fixed64\", \"fixed32\" or \"len\") at $[1]")
        XCTAssertEqual(message(#"protobuf.encode({ [1] = { "x", wire = { "fixed32" } } })"#),
                       "protobuf: cannot encode a string with wire type fixed32 at $[1][1]")
        // A list's `wire` string is about its numbers only: strings stay length-delimited.
        XCTAssertEqual(lua(#"return hex(protobuf.encode({ [1] = { "x", 5, wire = "fixed32" } }))"#), "0a01780d05000000")
        XCTAssertEqual(message(#"protobuf.encode({ [1] = { 4294967296, wire = "fixed32" } })"#),
                       "protobuf: cannot encode the integer 4294967296 as fixed32 (out of range) at $[1][1]")
        XCTAssertEqual(message(#"local t = {}; t[1] = { t }; protobuf.encode(t)"#),
                       "protobuf: cannot encode a table that contains itself (a reference cycle) at $[1][1]")
        XCTAssertEqual(message(#"protobuf.encode({ [1] = { print } })"#), "protobuf: cannot encode a function at $[1][1]")
        XCTAssertEqual(luaError("protobuf.decode({})")?.message, "bad argument #1 to 'decode' (string expected, got table)")
        XCTAssertEqual(luaError(#"protobuf.decode("", { guess = 1 })"#)?.message, "bad argument #2 to 'decode' (option 'guess' must be a boolean, got number)")
    }

    func testSwiftEntryPointKeepsTheStack() {
        XCTAssertTrue(rawDecode([0x08, 0x96, 0x01]).ok)
        XCTAssertTrue(rawDecode([]).ok)
        let bad = rawDecode([0x08, 0x96])
        XCTAssertFalse(bad.ok)
        XCTAssertEqual(bad.message, "decode: protobuf: truncated varint (field 1) at byte 2")
        XCTAssertEqual(bad.position, 2)
    }
}
