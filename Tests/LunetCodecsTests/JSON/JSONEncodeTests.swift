import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// Encoding tables: arrays or objects, what cannot be encoded (with its path), options, json.null, the Swift entry point.
final class JSONEncodeTests: JSONCodecTestCase {
    func testEmptyTablesAndArrays() {
        XCTAssertEqual(lua("return json.encode({})"), "{}")
        XCTAssertEqual(lua("return json.encode(json.array())"), "[]")
        XCTAssertEqual(lua("return json.encode(json.array{})"), "[]")
        XCTAssertEqual(lua("return json.encode(json.array{1, 2})"), "[1,2]")
        XCTAssertEqual(lua("return json.encode({1, 2, 3})"), "[1,2,3]")
        XCTAssertEqual(lua("return json.encode({{}, json.array(), {{}}})"), "[{},[],[{}]]")
        XCTAssertEqual(lua("return json.encode(json.decode('[]'))"), "[]")
        XCTAssertEqual(lua("return json.encode(json.decode('{}'))"), "{}")
        XCTAssertEqual(lua("return json.encode(json.decode(' [ [ ] , { } ] '))"), "[[],{}]")
        lua("""
        local t = { 1, 2 }
        assert(json.array(t) == t and json.is_array(t) and json.array(t) == t)
        assert(not json.is_array({}) and not json.is_array("x") and not json.is_array(nil))
        assert(tostring(getmetatable(json.array()).__name) == "json.array")
        """)
        XCTAssertEqual(luaError("json.array(setmetatable({}, {}))")?.kind, "argument")
        XCTAssertEqual(luaError("json.array(1)")?.message, "bad argument #1 to 'array' (table or nil expected, got number)")
    }

    func testArraysBuiltInAnyOrder() {
        lua("""
        local t = {}
        for i = 10, 1, -1 do t[i] = i end
        assert(json.encode(t) == "[1,2,3,4,5,6,7,8,9,10]", json.encode(t))
        local u = {}
        for i = 1, 100 do u[i] = i end
        local parts = {}
        for i = 1, 100 do parts[i] = tostring(i) end
        assert(json.encode(u) == "[" .. table.concat(parts, ",") .. "]")
        local h = { [3] = "c", [1] = "a", [2] = "b" }
        assert(json.encode(h) == '["a","b","c"]')
        """)
    }

    func testSparseAndMixedTablesAreErrors() {
        var e = luaError("json.encode({ a = { [1] = 1, [3] = 3 } })")
        XCTAssertEqual(e?.kind, "argument")
        XCTAssertEqual(e?.message, "cannot encode a sparse array (integer keys with holes: 2 keys, the largest 3) at $.a")
        e = luaError("json.encode({ x = { [2] = true } })")
        XCTAssertTrue(e?.message.contains("sparse array") == true && e?.message.hasSuffix("at $.x") == true, e?.message ?? "")
        e = luaError("json.encode({ 1, 2, x = 3 })")
        XCTAssertEqual(e?.message, "cannot encode a table with both string and integer keys at $")
        e = luaError("json.encode({ list = { { x = 1, 5 } } })")
        XCTAssertEqual(e?.message, "cannot encode a table with both string and integer keys at $.list[1]")
        e = luaError("json.encode({ [1.5] = 1 })")
        XCTAssertEqual(e?.message, "cannot encode a table with the key 1.5 (object keys must be strings, array keys 1..n) at $")
        // keys past the indices that are numbers but not integers, or strings of digits
        e = luaError("json.encode({ 10, 20, [2.5] = 1 })")
        XCTAssertEqual(e?.message, "cannot encode a table with the key 2.5 (object keys must be strings, array keys 1..n) at $")
        e = luaError("json.encode(json.array({ 10, 20, [\"3\"] = 1 }))")
        XCTAssertEqual(e?.message, "cannot encode a table with both string and integer keys at $")
        e = luaError("json.encode({ [0] = 1 })")
        XCTAssertEqual(e?.message, "cannot encode a table with the key 0 (object keys must be strings, array keys 1..n) at $")
        e = luaError("json.encode({ [true] = 1 })")
        XCTAssertEqual(e?.message, "cannot encode a table with a boolean key (object keys must be strings, array keys 1..n) at $")
        e = luaError("json.encode(json.array{ x = 1 })")
        XCTAssertEqual(e?.message, #"cannot encode the string key "x" in a json.array table at $"#)
        e = luaError("json.encode({ a = 1, [2] = 2 }, { sort_keys = true })")
        XCTAssertEqual(e?.message, "cannot encode a table with both string and integer keys at $")
    }

    func testUnencodableValuesNameThePath() {
        var e = luaError("json.encode({ a = { b = { 1, print } } })")
        XCTAssertEqual(e?.kind, "argument")
        XCTAssertEqual(e?.message, "cannot encode a function at $.a.b[2]")
        e = luaError("json.encode({ [\"a b\"] = { coroutine.create(print) } })")
        XCTAssertEqual(e?.message, #"cannot encode a thread at $["a b"][1]"#)
        e = luaError("json.encode({ x = io.stdout })")
        XCTAssertEqual(e?.message, "cannot encode a userdata at $.x")
        e = luaError("json.encode({ n = 0/0 })")
        XCTAssertEqual(e?.message, "cannot encode the number NaN (JSON has no NaN or infinity) at $.n")
        e = luaError("json.encode({ math.huge })")
        XCTAssertEqual(e?.message, "cannot encode the number inf (JSON has no NaN or infinity) at $[1]")
        XCTAssertEqual(luaError("json.encode(-math.huge)")?.message, "cannot encode the number -inf (JSON has no NaN or infinity) at $")
        XCTAssertEqual(luaError("json.encode()")?.message, "bad argument #1 to 'encode' (value expected)")
    }

    func testCyclesAndDepth() {
        var e = luaError("local t = { a = {} }; t.a.b = t; json.encode(t)")
        XCTAssertEqual(e?.kind, "argument")
        XCTAssertEqual(e?.message, "cannot encode a table that contains itself (a reference cycle) at $.a.b")
        e = luaError("""
        local t = {}
        local cur = t
        for i = 1, 1000 do cur[1] = {}; cur = cur[1] end
        json.encode(t)
        """)
        XCTAssertTrue(e?.message.hasPrefix("cannot encode: nesting deeper than 1000 levels at $[1][1]") == true, e?.message ?? "")
        // 1000 levels exactly are fine; a shared (not cyclic) table is fine.
        XCTAssertEqual(lua("""
        local t = {}
        local cur = t
        for i = 1, 999 do cur[1] = {}; cur = cur[1] end
        local s = json.encode(t)
        local shared = { 1 }
        return #s .. " " .. json.encode({ shared, shared })
        """), "2000 [[1],[1]]")
    }

    func testDeepAndWideTables() {
        // Several members at every level of a deep document, so that the encoder's path grows
        // while outer levels still have members to write.
        lua("""
        local function build(level)
          if level == 0 then return "leaf" end
          return { a = build(level - 1), b = { build(level - 1 > 0 and 1 or 0), level }, c = level }
        end
        local doc = build(60)
        local canonical = json.encode(doc, { sort_keys = true })
        for _, options in ipairs{ {}, { sort_keys = true }, { pretty = true } } do
          local text = json.encode(doc, options)
          assert(json.encode(json.decode(text), { sort_keys = true }) == canonical)
        end
        local bad = build(35)
        local t = bad
        for i = 1, 30 do t = t.a end
        t.b[1] = print
        local ok, err = pcall(json.encode, bad, { sort_keys = true })
        assert(not ok and err.message == "cannot encode a function at $" .. string.rep(".a", 30) .. ".b[1]", err.message)
        """)
    }

    func testSortKeysAndPretty() {
        XCTAssertEqual(lua(#"return json.encode({ b = 1, a = { z = true, y = json.null }, c = "x", B = 2, aa = 3 }, { sort_keys = true })"#),
                       #"{"B":2,"a":{"y":null,"z":true},"aa":3,"b":1,"c":"x"}"#)
        XCTAssertEqual(lua(#"return json.encode({ b = { 1, 2, {} }, a = { x = json.array() }, c = {} }, { pretty = true, sort_keys = true })"#), """
        {
          "a": {
            "x": []
          },
          "b": [
            1,
            2,
            {}
          ],
          "c": {}
        }
        """)
        XCTAssertEqual(lua("return json.encode({ 1, { 2 } }, { pretty = true })"), "[\n  1,\n  [\n    2\n  ]\n]")
        XCTAssertEqual(lua("return json.encode(5, { pretty = true })"), "5")
        XCTAssertEqual(lua("return json.encode({ 1 }, { pretty = false, sort_keys = false })"), "[1]")
        XCTAssertEqual(luaError("json.encode({}, { pretty = 1 })")?.message,
                       "bad argument #2 to 'encode' (option 'pretty' must be a boolean, got number)")
        XCTAssertEqual(luaError("json.encode({}, { sortkeys = true })")?.message,
                       "bad argument #2 to 'encode' (unknown option 'sortkeys' (known: 'pretty', 'sort_keys'))")
        XCTAssertEqual(luaError("json.encode({}, 5)")?.message, "bad argument #2 to 'encode' (options table expected, got number)")
    }

    func testNullSentinel() {
        lua("""
        local v = json.decode('[null, {"a": null}]')
        assert(v[1] == json.null and v[2].a == json.null and #v == 2)
        assert(json.encode(v) == '[null,{"a":null}]')
        assert(tostring(json.null) == "json.null")
        assert(type(json.null) == "userdata")
        assert(json.decode("null") == json.null)
        assert(getmetatable(json.null) == "json.null")
        """)
        // One sentinel per state: a second module table shares it.
        JSONModule.pushModule(L)
        lua_setglobal(L, "json2")
        XCTAssertEqual(lua("return json2.null == json.null and json2.is_array(json.array())"), "true")
    }

    func testEncodeIntoByteBuffer() {
        lua_createtable(L, 0, 0)
        lua_pushinteger(L, 7)
        LuaStack(L).setRawField(-2, "n")
        let out = ByteBuffer()
        out.append("x=", 2)
        let top = lua_gettop(L)
        XCTAssertNil(LuaJSONEncoder.encode(L, index: -1, options: .init(), into: out))
        XCTAssertEqual(lua_gettop(L), top)
        XCTAssertEqual(out.string, #"x={"n":7}"#)
        lua_pushcclosure(L, { _ in 0 }, 0)
        let error = LuaJSONEncoder.encode(L, index: -1, options: .init(), into: out)
        XCTAssertEqual(error?.kind, .argument)
        XCTAssertEqual(out.string, #"x={"n":7}"#)
        lua_settop(L, 0)
    }
}
