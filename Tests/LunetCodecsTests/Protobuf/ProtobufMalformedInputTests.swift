import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// Malformed input and limits: errors naming the problem and the byte, every prefix, byte flips, deep nesting both ways.
final class ProtobufMalformedInputTests: ProtobufCodecTestCase {
    func testDecodeErrorsNameTheProblemAndTheByte() throws {
        try loadSchema()
        let cases: [(String, String, Int)] = [
            ("08", "protobuf: truncated varint (field 1) at byte 2", 2),
            ("0896", "protobuf: truncated varint (field 1) at byte 2", 2),
            ("08ffffffffffffffffff7f", "protobuf: varint longer than 64 bits (field 1) at byte 2", 2),
            ("80", "protobuf: truncated varint (a field tag) at byte 1", 1),
            ("0a05616263", "protobuf: length 5 past the end of the message (3 bytes left) at byte 2", 2),
            ("0a", "protobuf: truncated varint (the length of field 1) at byte 2", 2),
            ("0d0102", "protobuf: truncated 32-bit value (field 1: 4 bytes needed) at byte 2", 2),
            ("0901020304", "protobuf: truncated 64-bit value (field 1: 8 bytes needed) at byte 2", 2),
            ("0801 0e", "protobuf: invalid wire type 6 (field 1) at byte 3", 3),
            ("0f", "protobuf: invalid wire type 7 (field 1) at byte 1", 1),
            ("0001", "protobuf: invalid field number 0 at byte 1", 1),
            ("f8ffffff3f00", "protobuf: field number 2147483647 out of range (the largest is 536870911) at byte 1", 1),
            ("0b 0801 0c", "protobuf: group (wire type 3, field 1) not supported: groups are deprecated at byte 1", 1),
            ("0c", "protobuf: unexpected end of group (wire type 4, field 1) at byte 1", 1),
        ]
        for (hex, message, position) in cases {
            for code in ["protobuf.decode(unhex('\(hex)'))", "schema:decode(unhex('\(hex)'), 'lunet.test.Node')"] {
                let e = luaError(code)
                XCTAssertEqual(e?.kind, "decode", code)
                XCTAssertEqual(e?.message, message, code)
                XCTAssertEqual(e?.position, position, code)
            }
        }
        // Inside a nested message, a length is checked against that message's end.
        var e = luaError("schema:decode(unhex('0a 03 0a 05 00'), 'lunet.test.Node')")
        XCTAssertEqual(e?.message, "protobuf: length 5 past the end of the message (1 byte left) at byte 4")
        // With guess, what does not parse as a message stays bytes.
        XCTAssertEqual(lua("return hex(protobuf.decode(unhex('0a 03 0a 05 00'), { guess = true })[1][1])"), "0a0500")
        // A group in a message with a schema, and a packed run cut short.
        e = luaError(#"schema:decode(unhex("38 01 53 08 01 54"), "legacy.Old")"#)
        XCTAssertEqual(e?.message, "protobuf: group (wire type 3, field 10) not supported: groups are deprecated at byte 3")
        e = luaError(#"schema:decode(unhex("12 02 01 ff"), "lunet.test.Everything")"#)
        XCTAssertEqual(e?.message, "protobuf: truncated varint (packed field lunet.test.Everything.packed_ints) at byte 4")
        e = luaError(#"schema:decode(unhex("92 01 03 000000"), "lunet.test.Everything")"#)
        XCTAssertEqual(e?.message, "protobuf: truncated 32-bit value (packed field lunet.test.Everything.packed_fixed: 4 bytes needed) at byte 4")
    }

    func testEveryPrefixOfAMessage() throws {
        try loadSchema()
        let bytes = try encodeWithProtoc("everything.txt")
        var failures = 0
        for n in 0...bytes.count {
            let prefix = Array(bytes[0..<n])
            let raw = rawDecode(prefix)
            if !raw.ok {
                XCTAssertTrue(raw.message.hasPrefix("decode: protobuf: "), raw.message)
                XCTAssertTrue((1...(n + 1)).contains(raw.position ?? 0), "\(n): \(raw.message)")
            }
            setGlobal("PREFIX", prefix)
            lua(#"""
            for _, f in ipairs{
              function() return schema:decode(PREFIX, "lunet.test.Everything") end,
              function() return protobuf.decode(PREFIX, { guess = true, single = true }) end,
            } do
              local ok, v = pcall(f)
              if ok then
                assert(type(v) == "table")
              else
                assert(type(v) == "table" and v.kind == "decode" and v.position >= 1 and v.position <= #PREFIX + 1, tostring(v.message))
                assert(v.message:match("^protobuf: .* at byte %d+$"), v.message)
              end
            end
            """#)
            if n < bytes.count && !raw.ok { failures += 1 }
        }
        XCTAssertGreaterThan(failures, bytes.count / 2, "most cut-off messages are errors")
    }

    func testRandomByteFlipsNeverCrash() throws {
        try loadSchema()
        let everything = try encodeWithProtoc("everything.txt")
        let maps = try encodeWithProtoc("maps.txt")
        var random = Xorshift()
        func next(_ n: Int) -> Int { random.next(n) }
        lua(#"""
        function check(b)
          local ok, v = pcall(schema.decode, schema, b, "lunet.test.Everything", { defaults = true })
          if ok then
            -- whatever decodes with the schema encodes again, and decodes to the same
            local again = schema:encode(v, "lunet.test.Everything")
            assert(deq(schema:decode(again, "lunet.test.Everything", { defaults = true }), v))
          else
            assert(v.kind == "decode", tostring(v.message))
          end
          local ok2, raw = pcall(protobuf.decode, b)
          if ok2 then
            assert(protobuf.decode(protobuf.encode(raw)) and deq(protobuf.decode(protobuf.encode(raw)), raw))
          else
            assert(raw.kind == "decode")
          end
          local ok3, guessed = pcall(protobuf.decode, b, { guess = true })
          if ok3 then assert(deq(protobuf.decode(protobuf.encode(guessed), { guess = true }), guessed)) end
          return ok
        end
        """#)
        var decoded = 0
        for i in 0..<6000 {
            var b = i % 2 == 0 ? everything : maps
            for _ in 0..<(1 + next(4)) {
                switch next(4) {
                case 0: b[next(b.count)] ^= UInt8(1 << next(8))
                case 1: b[next(b.count)] = UInt8(next(256))
                case 2: b.remove(at: next(b.count))
                default: b.insert(UInt8(next(256)), at: next(b.count))
                }
            }
            setGlobal("MUTANT", b)
            if lua("return check(MUTANT)") == "true" { decoded += 1 }
        }
        XCTAssertGreaterThan(decoded, 0)
        // And pure noise.
        for _ in 0..<3000 {
            let b = (0..<(1 + next(64))).map { _ in UInt8(next(256)) }
            setGlobal("MUTANT", b)
            lua("check(MUTANT)")
        }
    }

    /// `levels` nested Node messages: field 1 holds the next one.
    private func nested(_ levels: Int) -> [UInt8] {
        // Built back to front: the innermost `value = 1`, then each level's length and tag.
        var reversed: [UInt8] = [0x01, 0x10]
        for _ in 0..<levels {
            var n = reversed.count
            var size: [UInt8] = []
            repeat {
                size.append(UInt8(n & 0x7F) | (n >= 0x80 ? 0x80 : 0))
                n >>= 7
            } while n > 0
            reversed.append(contentsOf: size.reversed())
            reversed.append(0x0A)
        }
        return reversed.reversed()
    }

    func testDeepNesting() throws {
        try loadSchema()
        setGlobal("DEEP", nested(100_000))
        var e = luaError(#"schema:decode(DEEP, "lunet.test.Node")"#)
        XCTAssertEqual(e?.kind, "decode")
        XCTAssertTrue(e?.message.hasPrefix("protobuf: nesting too deep (more than 100 levels of messages) at byte ") == true, e?.message ?? "")
        e = luaError(#"protobuf.decode(DEEP, { guess = true })"#)
        XCTAssertEqual(e?.kind, "decode")
        XCTAssertTrue(e?.message.hasPrefix("protobuf: nesting too deep (more than 100 levels of messages) at byte ") == true, e?.message ?? "")
        // Without guess nothing nests: the outer message holds bytes.
        XCTAssertEqual(lua("local s = protobuf.decode(DEEP)[1][1]; return type(s) == 'string' and #s > #DEEP - 6"), "true")
        // The decoder is iterative: a raised limit decodes all 100,000 levels.
        lua(#"""
        local v = schema:decode(DEEP, "lunet.test.Node", { max_depth = 200000 })
        local depth = 0
        while v.child do v = v.child; depth = depth + 1 end
        assert(depth == 100000 and v.value == 1, depth)
        local g = protobuf.decode(DEEP, { guess = true, max_depth = 200000 })
        depth = 0
        while g[1] and type(g[1][1]) == "table" do g = g[1][1]; depth = depth + 1 end
        assert(depth == 100000, depth)
        """#)
        // Exactly at the limit: 100 levels decode, 101 do not; encode has the same limit.
        setGlobal("D100", nested(100))
        setGlobal("D101", nested(101))
        lua(#"""
        local v = schema:decode(D100, "lunet.test.Node")
        assert(schema:encode(v, "lunet.test.Node") == D100)
        assert(not pcall(schema.decode, schema, D101, "lunet.test.Node"))
        assert(schema:decode(D101, "lunet.test.Node", { max_depth = 101 }))
        local w = schema:decode(D101, "lunet.test.Node", { max_depth = 101 })
        local ok, err = pcall(schema.encode, schema, w, "lunet.test.Node")
        assert(not ok and err.kind == "argument" and err.message:find("nested deeper than 100 levels", 1, true), err.message)
        assert(schema:encode(w, "lunet.test.Node", { max_depth = 101 }) == D101)
        """#)
        // Encoding recurses: past 100 levels only when asked, and never past 1000.
        setGlobal("D300", nested(300))
        lua(#"""
        local v = schema:decode(D300, "lunet.test.Node", { max_depth = 5000 })
        assert(schema:encode(v, "lunet.test.Node", { max_depth = 5000 }) == D300)
        local g = protobuf.decode(D300, { guess = true, max_depth = 5000 })
        assert(protobuf.encode(g, { max_depth = 5000 }) == D300)
        """#)
    }

    /// Runs `body` on a thread with a stack of `size` bytes (the Lua state is not used
    /// elsewhere meanwhile).
    private func onThread(stackSize size: Int, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            body()
            done.signal()
        }
        thread.stackSize = size
        thread.start()
        done.wait()
    }

    func testDeepEncodingStopsBeforeTheStackEnds() throws {
        try loadSchema()
        setGlobal("D1000", nested(1000))
        setGlobal("D1001", nested(1001))
        lua(#"""
        V1000 = schema:decode(D1000, "lunet.test.Node", { max_depth = 5000 })
        V1001 = schema:decode(D1001, "lunet.test.Node", { max_depth = 5000 })
        G1000 = protobuf.decode(D1000, { guess = true, max_depth = 5000 })
        """#)
        // A small stack: an error, not a crash.
        nonisolated(unsafe) let test = self
        onThread(stackSize: 256 * 1024) {
            for code in [#"schema:encode(V1000, "lunet.test.Node", { max_depth = 5000 })"#,
                         "protobuf.encode(G1000, { max_depth = 5000 })"] {
                let e = test.luaError(code)
                XCTAssertEqual(e?.kind, "argument")
                XCTAssertTrue(e?.message.hasPrefix("protobuf: cannot encode: messages nested too deep for the C stack at $") == true, e?.message ?? "")
            }
        }
        // A big one: 1000 levels at most, whatever max_depth says.
        onThread(stackSize: 256 * 1024 * 1024) {
            test.lua(#"""
            assert(schema:encode(V1000, "lunet.test.Node", { max_depth = 5000 }) == D1000)
            assert(protobuf.encode(G1000, { max_depth = 5000 }) == D1000)
            local ok, err = pcall(schema.encode, schema, V1001, "lunet.test.Node", { max_depth = 5000 })
            assert(not ok and err.message:find("nested deeper than 1000 levels", 1, true), err.message)
            """#)
        }
    }
}
