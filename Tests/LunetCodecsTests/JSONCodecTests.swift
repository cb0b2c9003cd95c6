import CLunet
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// The JSON codec through the `json` module, on a bare Lua state (no host, no prelude).
final class JSONCodecTests: LuaSnippetTestCase {

    override func setUp() {
        super.setUp()
        L = lunet_newstate()!
        XCTAssertEqual(lunet_openlibs(L), LUA_OK)
        JSONModule.pushModule(L)
        lua_setglobal(L, "json")
        // A deep comparison for round trips (json.null and array marks included).
        lua("""
        function deq(a, b)
          if type(a) ~= type(b) then return false end
          if type(a) == "number" then return math.type(a) == math.type(b) and (a == b or (a ~= a and b ~= b)) end
          if type(a) ~= "table" then return a == b end
          if json.is_array(a) ~= json.is_array(b) then return false end
          for k, v in pairs(a) do if not deq(v, b[k]) then return false end end
          for k in pairs(b) do if a[k] == nil then return false end end
          return true
        end
        """)
    }


    // MARK: helpers






    /// Decodes raw bytes with the Swift entry point; checks the stack discipline.
    private func decodeBytes(_ bytes: [UInt8], maxDepth: Int = 1000) -> (ok: Bool, message: String) {
        let top = lua_gettop(L)
        let status = bytes.withUnsafeBytes { LuaJSONDecoder.decode(L, $0, maxDepth: maxDepth) }
        XCTAssertEqual(lua_gettop(L), top + 1, "decode must leave exactly one value")
        defer { lua_settop(L, top) }
        if status == 1 { return (true, "") }
        XCTAssertEqual(status, LUNET_RAISE)
        return (false, describeError(-1))
    }

    // MARK: round trips and types

    func testScalars() {
        XCTAssertEqual(lua("return json.encode(1)"), "1")
        XCTAssertEqual(lua("return json.encode(-42)"), "-42")
        XCTAssertEqual(lua("return json.encode(math.mininteger)"), "-9223372036854775808")
        XCTAssertEqual(lua("return json.encode(math.maxinteger)"), "9223372036854775807")
        XCTAssertEqual(lua("return json.encode(1.5)"), "1.5")
        XCTAssertEqual(lua("return json.encode(1.0)"), "1.0")
        XCTAssertEqual(lua("return json.encode(0.1)"), "0.1")
        XCTAssertEqual(lua("return json.encode(1e300)"), "1e+300")
        XCTAssertEqual(lua("return json.encode(-0.0)"), "-0.0")
        XCTAssertEqual(lua("return json.encode(true)"), "true")
        XCTAssertEqual(lua("return json.encode(false)"), "false")
        XCTAssertEqual(lua("return json.encode(nil)"), "null")
        XCTAssertEqual(lua("return json.encode(json.null)"), "null")
        XCTAssertEqual(lua(#"return json.encode("a/b")"#), #""a/b""#)
    }

    func testIntegersStayIntegersAndFloatsStayFloats() {
        lua("""
        assert(math.type(json.decode("1")) == "integer")
        assert(math.type(json.decode("-0")) == "integer")
        assert(math.type(json.decode("1.0")) == "float")
        assert(math.type(json.decode("1e2")) == "float" and json.decode("1e2") == 100.0)
        assert(json.decode("9223372036854775807") == math.maxinteger)
        assert(json.decode("-9223372036854775808") == math.mininteger)
        assert(math.type(json.decode("9223372036854775808")) == "float")
        assert(math.type(json.decode("-9223372036854775809")) == "float")
        assert(json.decode("12345678901234567890123") == 1.2345678901234568e22)
        assert(json.decode("0.1") == 0.1 and json.decode("-2.5e-3") == -0.0025)
        assert(json.decode("1.7976931348623157e308") == 1.7976931348623157e308)
        assert(json.decode("5e-324") == 5e-324)
        assert(json.decode("123456789.123456789") == 123456789.123456789)
        assert(json.decode("0.30000000000000004") == 0.30000000000000004)
        assert(json.decode("1E-7") == 1e-7 and json.decode("1e+22") == 1e22 and json.decode("1e23") == 1e23)
        assert(json.decode("-0.0") == 0 and 1 / json.decode("-0.0") < 0)
        -- every float text the encoder writes reads back as the same double
        for _, x in ipairs{ 0.1, 1/3, 2/3, 1e-300, 123.456, 1e21, 1e22, 2^53, 2^63, 5e-324, 1.7976931348623157e308, -1.5 } do
          local y = json.decode(json.encode(x))
          assert(y == x and math.type(y) == "float", tostring(x))
        end
        for i = 1, 2000 do
          local x = (math.random() - 0.5) * 10 ^ math.random(-30, 30)
          assert(json.decode(json.encode(x)) == x, string.format("%.17g", x))
        end
        """)
    }

    /// The decoder's own float paths (exact double, exact 80-bit) against strtod, bit for bit,
    /// on random decimals and on the hard cases: values at and next to halfway points.
    func testFloatsMatchStrtod() {
        var seed: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ n: UInt64) -> UInt64 {
            seed ^= seed << 13
            seed ^= seed >> 7
            seed ^= seed << 17
            return seed % n
        }
        var texts: [String] = ["9007199254740993.0", "9007199254740993e0", "0.1", "0.3", "2.2250738585072014e-308",
                               "1.7976931348623157e308", "4.9406564584124654e-324", "123456789012345678e-27",
                               "9999999999999999999e27", "1e-27", "0.0000000000000000000000000001"]
        for _ in 0..<60_000 {
            var digits = String(next(9) + 1)
            for _ in 0..<next(19) { digits += String(next(10)) }
            let point = Int(next(UInt64(digits.count + 1)))
            var text = String(digits.prefix(point)) + (point < digits.count ? "." + digits.dropFirst(point) : "")
            if text.hasPrefix(".") { text = "0" + text }
            if next(2) == 0 { text += "e" + String(Int(next(61)) - 30) }
            if next(4) == 0 { text = "-" + text }
            texts.append(text)
        }
        for _ in 0..<20_000 {
            // 2^60 + k * 2^8 is a double; 2^7 more is halfway to the next one.
            let halfway = (UInt64(1) << 60) + next(1 << 20) * 256 + 128
            let delta = [0, 1, 2, 127, 128].randomElement()!
            texts.append("\(halfway &+ UInt64(delta))e0")
            texts.append("\(halfway &- UInt64(delta))e0")
            texts.append("\(halfway / 10).\(halfway % 10)e1")
        }
        for text in texts {
            let top = lua_gettop(L)
            let status = Array(text.utf8).withUnsafeBytes { LuaJSONDecoder.decode(L, $0) }
            XCTAssertEqual(status, 1, text)
            let got = lua_tonumberx(L, -1, nil)
            let expected = strtod(text, nil)
            XCTAssertEqual(got.bitPattern, expected.bitPattern, "\(text): \(got) instead of \(expected)")
            lua_settop(L, top)
        }
    }

    func testRoundTripDocument() {
        lua("""
        local doc = [==[{"name":"lunet","tags":["a","b"],"n":3,"f":2.5,"ok":true,"no":false,"nothing":null,"nested":{"deep":[[1,2],[3,{"x":[]}]]},"empty":{},"list":[]}]==]
        local v = json.decode(doc)
        assert(v.name == "lunet" and v.tags[2] == "b" and v.n == 3 and v.f == 2.5)
        assert(v.ok == true and v.no == false and v.nothing == json.null)
        assert(json.is_array(v.tags) and not json.is_array(v.nested) and json.is_array(v.list))
        assert(next(v.empty) == nil and not json.is_array(v.empty))
        local again = json.decode(json.encode(v))
        assert(deq(v, again))
        assert(json.encode(v.nested.deep) == "[[1,2],[3,{\\"x\\":[]}]]")
        assert(json.encode(v.list) == "[]" and json.encode(v.empty) == "{}")
        """)
    }

    func testLargeContainers() {
        // Containers past the size where the decoder stops piling items on the stack.
        lua("""
        for _, n in ipairs{ 255, 256, 257, 1000, 100000 } do
          local t, o = {}, {}
          for i = 1, n do t[i] = i * 2; o["k" .. i] = { i } end
          local a = json.decode(json.encode(t))
          assert(#a == n and a[n] == 2 * n and json.is_array(a), n)
          local b = json.decode(json.encode(o))
          local count = 0
          for k, v in pairs(b) do count = count + 1; assert(v[1] == tonumber(k:sub(2))) end
          assert(count == n, n)
        end
        -- duplicate keys on both sides of that size: the last one still wins
        local parts = {}
        for i = 1, 600 do parts[#parts + 1] = string.format('"k%d":%d', i % 300, i) end
        local v = json.decode("{" .. table.concat(parts, ",") .. "}")
        for i = 0, 299 do assert(v["k" .. i] == 300 + i + (i == 0 and 300 or 0), i) end
        """)
    }

    func testDuplicateKeysLastWins() {
        XCTAssertEqual(lua(#"return json.decode('{"a":1,"a":2}').a"#), "2")
    }

    // MARK: strings

    func testStringEscapes() {
        XCTAssertEqual(lua(#"return json.encode("q\"b\\s/\n\r\t\b\f\1\31\127")"#), #""q\"b\\s/\n\r\t\b\f\u0001\u001f\#u{7F}""#)
        XCTAssertEqual(lua(#"return json.encode("héllo ✓ 😀")"#), "\"héllo ✓ 😀\"")
        lua(#"""
        assert(json.decode([["\"\\\/\b\f\n\r\t"]]) == "\"\\/\b\f\n\r\t")
        assert(json.decode([["\u0041\u00e9\u20AC"]]) == "Aé€")
        assert(json.decode([["\ud83d\ude00"]]) == "😀")
        assert(json.decode([["\uD834\uDD1E x"]]) == "\u{1D11E} x")
        assert(json.decode([["\u0000"]]) == "\0")
        assert(json.decode([["a\u0000b"]]) == "a\0b")
        local long = string.rep("abcdefgh", 1000) .. "\n" .. string.rep("é", 1000)
        assert(json.decode(json.encode(long)) == long)
        for b = 0, 127 do
          local s = string.char(b)
          assert(json.decode(json.encode(s)) == s, b)
        end
        -- special bytes at every offset of the eight-byte scans, in values and in keys
        local specials = { '"', '\\', '\n', '\1', '\127', '/', 'é', '€', '😀' }
        for _, x in ipairs(specials) do
          for _, y in ipairs(specials) do
            for k = 0, 9 do
              for m = 0, 9 do
                local s = string.rep("a", k) .. x .. string.rep("b", m) .. y .. "c"
                local text = json.encode({ [s] = s })
                local back = json.decode(text)
                assert(back[s] == s, text)
              end
            end
          end
        end
        """#)
    }

    func testLoneSurrogatesAreRejected() {
        for text in [#""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\ud800x""#, #""\ude00\ud83d""#] {
            let e = luaError("json.decode([[\(text)]])")
            XCTAssertEqual(e?.kind, "decode")
            XCTAssertTrue(e?.message.contains("lone UTF-16 surrogate") == true, e?.message ?? "")
        }
        XCTAssertEqual(luaError(#"json.decode([["ab\ud800"]])"#)?.position, 4)
    }

    func testInvalidUTF8IsRejectedBothWays() {
        // decoding
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
                                [0x22, 0xE2, 0x82, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0x80, 0x22],
                                [0x22, 0xE2, 0x82]] {
            let r = decodeBytes(bytes)
            XCTAssertFalse(r.ok, "\(bytes)")
            XCTAssertTrue(r.message.hasPrefix("decode: JSON: "), r.message)
        }
        XCTAssertTrue(decodeBytes([0x22, 0xFF, 0x22]).message.contains("invalid UTF-8 (byte 0xFF) at line 1, column 2 (byte 2)"))
        XCTAssertTrue(decodeBytes([0x22, 0x5C, 0x6E, 0xFE, 0x22]).message.contains("invalid UTF-8"))
        XCTAssertTrue(decodeBytes([0x22, 0xE2, 0x82, 0xAC, 0x22]).ok)
        // encoding
        var e = luaError(#"json.encode({ a = { b = { "ok", "bad\255" } } })"#)
        XCTAssertEqual(e?.kind, "argument")
        XCTAssertEqual(e?.message, "cannot encode a string that is not valid UTF-8 (byte 0xFF at offset 4) at $.a.b[2]")
        e = luaError(#"json.encode({ ["k\192"] = 1 })"#)
        XCTAssertEqual(e?.message, #"cannot encode a key that is not valid UTF-8 (byte 0xC0 at offset 2) at $["k\xC0"]"#)
        XCTAssertNotNil(luaError(#"json.encode("\237\160\128")"#))     // an encoded surrogate
        XCTAssertNotNil(luaError(#"json.encode("\244\144\128\128")"#))  // above U+10FFFF
    }

    // MARK: tables

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

    // MARK: errors

    func testMalformedInputsNamePositions() {
        let cases: [(String, String, Int)] = [
            ("", "empty input (expected a JSON value) at line 1, column 1 (byte 1)", 1),
            ("   ", "unexpected end of input (expected a value) at line 1, column 4 (byte 4)", 4),
            ("{\"a\":1,\n \"b\":2,\n \"c\":3 }}", "unexpected character '}' after the JSON value at line 3, column 9 (byte 25)", 25),
            ("[1,2", "unexpected end of input (expected ',' or ']') at line 1, column 5 (byte 5)", 5),
            ("[1,2,]", "unexpected character ']' (expected a value) at line 1, column 6 (byte 6)", 6),
            ("{\"a\" 1}", "unexpected character '1' (expected ':') at line 1, column 6 (byte 6)", 6),
            ("{\"a\":1,}", "unexpected character '}' (expected a string key) at line 1, column 8 (byte 8)", 8),
            ("{1:2}", "unexpected character '1' (expected a string key) at line 1, column 2 (byte 2)", 2),
            ("[1 2]", "unexpected character '2' (expected ',' or ']') at line 1, column 4 (byte 4)", 4),
            ("\"abc", "unexpected end of input (expected '\"' to close the string) at line 1, column 5 (byte 5)", 5),
            ("\"a\tb\"", "unescaped control character 0x09 in string at line 1, column 3 (byte 3)", 3),
            ("\"\\x\"", "invalid escape '\\x' in string at line 1, column 3 (byte 3)", 3),
            ("\"\\u12G4\"", "invalid \\u escape (expected 4 hexadecimal digits) at line 1, column 6 (byte 6)", 6),
            ("01", "leading zero in number at line 1, column 1 (byte 1)", 1),
            ("-", "unexpected end of input (expected a digit) at line 1, column 2 (byte 2)", 2),
            ("1.", "unexpected end of input (expected a digit after '.') at line 1, column 3 (byte 3)", 3),
            ("1.e5", "unexpected character 'e' (expected a digit after '.') at line 1, column 3 (byte 3)", 3),
            ("1e", "unexpected end of input (expected a digit in the exponent) at line 1, column 3 (byte 3)", 3),
            ("[.5]", "unexpected character '.' (expected a value) at line 1, column 2 (byte 2)", 2),
            ("tru", "invalid literal (expected 'true') at line 1, column 1 (byte 1)", 1),
            ("nul", "invalid literal (expected 'null') at line 1, column 1 (byte 1)", 1),
            ("[falsy]", "invalid literal (expected 'false') at line 1, column 2 (byte 2)", 2),
            ("[1e999]", "number out of range for a double at line 1, column 2 (byte 2)", 2),
            ("[NaN]", "unexpected character 'N' (expected a value) at line 1, column 2 (byte 2)", 2),
            ("\"é\" x", "unexpected character 'x' after the JSON value at line 1, column 5 (byte 6)", 6),
            ("[1]\u{0}", "unexpected byte 0x00 after the JSON value at line 1, column 4 (byte 4)", 4),
        ]
        for (input, message, position) in cases {
            let top = lua_gettop(L)
            let status = Array(input.utf8).withUnsafeBytes { LuaJSONDecoder.decode(L, $0) }
            XCTAssertEqual(status, LUNET_RAISE, input)
            XCTAssertEqual(lua_gettop(L), top + 1)
            let s = LuaStack(L)
            XCTAssertEqual(s.stringField(-1, "kind"), "decode")
            XCTAssertEqual(s.stringField(-1, "message"), "JSON: " + message, input)
            XCTAssertEqual(s.integerField(-1, "position"), position, input)
            lua_settop(L, top)
        }
        let e = luaError("json.decode('[1, 2,\\n  3 x]')")
        XCTAssertEqual(e?.kind, "decode")
        XCTAssertEqual(e?.message, "JSON: unexpected character 'x' (expected ',' or ']') at line 2, column 5 (byte 12)")
        XCTAssertEqual(e?.position, 12)
        XCTAssertEqual(luaError("json.decode(5)")?.message, "bad argument #1 to 'decode' (string expected, got number)")
        XCTAssertEqual(luaError("json.decode('1', { max_depth = 0 })")?.message,
                       "bad argument #2 to 'decode' (option 'max_depth' must be a positive integer, got 0)")
        XCTAssertEqual(luaError("json.decode('1', { max_depth = 'x' })")?.message,
                       "bad argument #2 to 'decode' (option 'max_depth' must be a positive integer, got a string)")
        XCTAssertEqual(luaError("json.decode('1', { depth = 3 })")?.kind, "argument")
    }

    func testTruncatedInputsAreRejectedCleanly() {
        let doc = Array(#"{"a":[1,-2.5e3,true,false,null,"x\u00e9\n",{"b":{}}],"c":"😀"}"#.utf8)
        XCTAssertTrue(decodeBytes(doc).ok)
        for n in 0..<doc.count {
            XCTAssertFalse(decodeBytes(Array(doc[0..<n])).ok, "prefix of \(n) bytes")
        }
    }

    /// Random damage to a document: never a crash, never a stray stack value, and whatever
    /// decodes also encodes and decodes back to the same value.
    func testMutatedDocuments() {
        let doc = Array(#"{"a":[1,-2.5e3,true,false,null,"x\u00e9\n\ud83d\ude00",{"b":{}},[]],"c":"😀 é","d":12345678901234567890,"e":{"f":[0.5,"\"\\/"]}}"#.utf8)
        XCTAssertTrue(decodeBytes(doc).ok)
        let specials: [UInt8] = Array(#"{}[],:"\ u0123456789eE.-+tfnl"#.utf8) + [0x00, 0x0A, 0x80, 0xBF, 0xC3, 0xE2, 0xED, 0xF0, 0xF4, 0xFF]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ n: Int) -> Int {
            seed ^= seed << 13
            seed ^= seed >> 7
            seed ^= seed << 17
            return Int(seed % UInt64(n))
        }
        var accepted = 0
        for _ in 0..<5000 {
            var bytes = doc
            for _ in 0...next(3) {
                switch next(3) {
                case 0: bytes[next(bytes.count)] = specials[next(specials.count)]
                case 1: bytes.insert(specials[next(specials.count)], at: next(bytes.count + 1))
                default: if bytes.count > 1 { bytes.remove(at: next(bytes.count)) }
                }
            }
            if decodeBytes(bytes).ok {
                accepted += 1
                roundTrip(bytes, String(decoding: bytes, as: UTF8.self))
            }
        }
        XCTAssertGreaterThan(accepted, 100)
    }

    func testByteOrderMarkIsSkipped() {
        XCTAssertTrue(decodeBytes([0xEF, 0xBB, 0xBF] + Array("[1]".utf8)).ok)
        XCTAssertFalse(decodeBytes([0xEF, 0xBB, 0xBF]).ok)
        XCTAssertFalse(decodeBytes(Array(" ".utf8) + [0xEF, 0xBB, 0xBF] + Array("[1]".utf8)).ok)
    }

    func testNestingLimit() {
        // 100,000 levels: an error, not a crash, with the default limit and with a raised one.
        var e = luaError("json.decode(string.rep('[', 100000) .. string.rep(']', 100000))")
        XCTAssertEqual(e?.kind, "decode")
        XCTAssertEqual(e?.message, "JSON: nesting too deep (more than 1000 levels of arrays and objects) at line 1, column 1001 (byte 1001)")
        e = luaError("json.decode(string.rep('{\"a\":', 100000))")
        XCTAssertEqual(e?.position, 1000 * 5 + 1)
        XCTAssertEqual(luaError("json.decode('[[[1]]]', { max_depth = 2 })")?.position, 3)
        XCTAssertEqual(lua("return json.decode('[[[1]]]', { max_depth = 3 })[1][1][1]"), "1")
        XCTAssertEqual(lua("return #json.encode(json.decode(string.rep('[', 1000) .. string.rep(']', 1000)))"), "2000")
        // The parser is iterative: a raised limit is bounded by the Lua stack, never the C stack.
        XCTAssertEqual(lua("""
        local v = json.decode(string.rep('[', 100000) .. string.rep(']', 100000), { max_depth = 200000 })
        local n = 0
        while v[1] do v = v[1]; n = n + 1 end
        return n
        """), "99999")
        e = luaError("json.decode(string.rep('[', 1000000), { max_depth = 2000000 })")
        XCTAssertEqual(e?.message, "JSON: unexpected end of input (expected a value) at line 1, column 1000001 (byte 1000001)")
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

    // MARK: JSONTestSuite

    /// Every y_ file is accepted (and survives an encode/decode round trip), every n_ file is
    /// rejected, and every i_ file does what docs/json.md says it does.
    func testJSONTestSuite() throws {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let suite = here.appendingPathComponent("../Fixtures/JSONTestSuite/test_parsing").standardized
        let files = try FileManager.default.contentsOfDirectory(atPath: suite.path).filter { $0.hasSuffix(".json") }.sorted()
        XCTAssertGreaterThan(files.count, 300)

        let docs = here.appendingPathComponent("../../docs/json.md").standardized
        let documented = try String(contentsOf: docs, encoding: .utf8)
        var expected: [String: Bool] = [:]
        for line in documented.split(separator: "\n") where line.hasPrefix("| `i_") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            expected[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = cells[1] == "accepted"
        }

        var table: [String] = []
        for name in files {
            let bytes = [UInt8](try Data(contentsOf: suite.appendingPathComponent(name)))
            let accepted = decodeBytes(bytes).ok
            switch name.first {
            case "y":
                XCTAssertTrue(accepted, "\(name) must be accepted: \(decodeBytes(bytes).message)")
                if accepted { roundTrip(bytes, name) }
            case "n":
                XCTAssertFalse(accepted, "\(name) must be rejected")
            default:
                table.append("| `\(name)` | \(accepted ? "accepted" : "rejected") |")
                XCTAssertEqual(expected[name], accepted, "docs/json.md is out of date for \(name); its row: | `\(name)` | \(accepted ? "accepted" : "rejected") |")
            }
        }
        if expected.count != table.count {
            XCTFail("docs/json.md lists \(expected.count) i_ files, the suite has \(table.count):\n" + table.joined(separator: "\n"))
        }
    }

    private func roundTrip(_ bytes: [UInt8], _ name: String) {
        let top = lua_gettop(L)
        defer { lua_settop(L, top) }
        _ = bytes.withUnsafeBytes { LuaJSONDecoder.decode(L, $0) }
        let out = ByteBuffer()
        if let error = LuaJSONEncoder.encode(L, index: -1, options: .init(), into: out) {
            XCTFail("\(name): cannot encode what was decoded: \(error)")
            return
        }
        XCTAssertEqual(LuaJSONDecoder.decode(L, UnsafeRawBufferPointer(out.bytes)), 1, "\(name): \(out.string)")
        lua_getglobal(L, "deq")
        lua_pushvalue(L, -3)
        lua_pushvalue(L, -3)
        XCTAssertEqual(lunet_pcall(L, 2, 1), LUA_OK)
        XCTAssertEqual(lua_toboolean(L, -1), 1, "\(name) changed in a round trip: \(out.string)")
    }
}
