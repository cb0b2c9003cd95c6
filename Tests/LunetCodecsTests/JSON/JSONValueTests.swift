import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// JSON values both ways: scalars, integers and floats keeping their subtype, documents, big containers.
final class JSONValueTests: JSONCodecTestCase {
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
        var random = Xorshift(seed: 0x2545_F491_4F6C_DD1D)
        func next(_ n: UInt64) -> UInt64 { random.next(n) }
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

    /// Repeated keys come from a cache (JSONParser+Keys.swift): keys alike in length and first
    /// eight bytes, more keys than it has entries, keys at the very end of the input, the empty
    /// key and keys past Lua's short-string length must each still name their own member.
    func testRepeatedKeysEachNameTheirOwnMember() {
        lua("""
        local names = { "", "a", "abcdefgh", "abcdefgh1", "abcdefgh2", "abcdefgi1", string.rep("k", 40),
          string.rep("k", 41), string.rep("k", 39) .. "j" }
        for i = 1, 150 do names[#names + 1] = "key" .. i end
        local records = {}
        for r = 1, 3 do
          local members = {}
          for i, name in ipairs(names) do members[i] = string.format('"%s":%d', name, r * 1000 + i) end
          records[r] = "{" .. table.concat(members, ",") .. "}"
        end
        local v = json.decode("[" .. table.concat(records, ",") .. "]")
        for r = 1, 3 do
          for i, name in ipairs(names) do assert(v[r][name] == r * 1000 + i, name) end
        end
        assert(json.decode('{"a":1,"b":{"a":2,"ab":3}}').b.ab == 3)
        assert(json.decode('{"x":{"y":1},"y":2}').y == 2)
        """)
    }

    /// An object gets its table at once, sized for as many members as the last object closed at
    /// its depth had (up to 64): objects with fewer members, more, none, more than 64, repeated
    /// keys (the last wins) and objects between arrays at the same depth still decode to exactly
    /// their members.
    func testObjectsSizedFromTheirPredecessor() {
        lua("""
        local sizes = { 3, 3, 1, 5, 0, 2, 70, 4, 64, 65, 1, 2 }
        local parts = {}
        for r, n in ipairs(sizes) do
          local members = {}
          for i = 1, n do members[i] = string.format('"m%d":%d', i, r * 1000 + i) end
          -- a repeated key at the end of every other object: the later value wins
          if n > 0 and r % 2 == 0 then members[#members + 1] = string.format('"m1":%d', -r) end
          parts[#parts + 1] = "{" .. table.concat(members, ",") .. "}"
          if r % 3 == 0 then parts[#parts + 1] = "[1,[2],{}]" end
        end
        local text = "[" .. table.concat(parts, ",") .. "]"
        local v = json.decode(text)
        local k = 0
        for r, n in ipairs(sizes) do
          k = k + 1
          local o = v[k]
          assert(not json.is_array(o), r)
          local count = 0
          for name, value in pairs(o) do
            count = count + 1
            local i = tonumber(name:match("^m(%d+)$"))
            local want = (i == 1 and r % 2 == 0) and -r or r * 1000 + i
            assert(value == want, r .. " " .. name)
          end
          assert(count == n, r .. ": " .. count)
          if r % 3 == 0 then
            k = k + 1
            assert(json.is_array(v[k]) and v[k][2][1] == 2 and next(v[k][3]) == nil, r)
          end
        end
        assert(#v == k)
        assert(deq(json.decode(json.encode(v)), v))
        """)
    }

    /// The key cache has two ways a set, the one used last first, and more sets from 64 KB of
    /// input on: keys met in a new order each record (so hits come from either way, and ways
    /// trade places) and more keys than slots (so sets evict) still name their own member, in
    /// a document below that size and in one above it.
    func testKeyCacheWaysAndSizes() {
        lua("""
        local names = {}
        for i = 1, 300 do names[i] = (i % 3 == 0 and "member_" or "k") .. i end
        for _, records in ipairs{ 4, 60 } do
          local parts = {}
          for r = 1, records do
            local members = {}
            for j = 1, #names do
              -- a different order every record: a stride through the names, coprime to 300
              local i = (j * (r % 2 == 0 and 7 or 11) + r) % #names + 1
              members[j] = string.format('"%s":%d', names[i], r * 1000 + i)
            end
            parts[r] = "{" .. table.concat(members, ",") .. "}"
          end
          local text = "[" .. table.concat(parts, ",") .. "]"
          assert((records == 4) == (#text < 64 * 1024), #text)
          local v = json.decode(text)
          for r = 1, records do
            local count = 0
            for k, value in pairs(v[r]) do
              count = count + 1
              assert(value == r * 1000 + tonumber(k:match("%d+$")), k)
            end
            assert(count == #names, count)
          end
        end
        """)
    }
}
