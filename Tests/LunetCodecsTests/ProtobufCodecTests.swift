import CLunet
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// The protobuf codec through the `protobuf` module, on a bare Lua state (no host, no prelude),
/// checked against Debian's protoc: the descriptor set and the reference encodings are made at
/// test time from Tests/Fixtures/protobuf (test.proto, legacy.proto and text-format inputs).
final class ProtobufCodecTests: LuaSnippetTestCase {

    override func setUp() {
        super.setUp()
        L = lunet_newstate()!
        XCTAssertEqual(lunet_openlibs(L), LUA_OK)
        ProtobufModule.pushModule(L)
        lua_setglobal(L, "protobuf")
        lua("""
        function deq(a, b)
          if type(a) ~= type(b) then return false end
          if type(a) == "number" then return math.type(a) == math.type(b) and (a == b or (a ~= a and b ~= b)) end
          if type(a) ~= "table" then return a == b end
          for k, v in pairs(a) do if not deq(v, b[k]) then return false end end
          for k in pairs(b) do if a[k] == nil then return false end end
          return true
        end
        function hex(s) return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end)) end
        function unhex(h) return (h:gsub("%s", ""):gsub("..", function(x) return string.char(tonumber(x, 16)) end)) end
        """)
    }


    // MARK: protoc

    private static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/protobuf").standardized

    private struct ProtocMissing: Error, CustomStringConvertible {
        var description: String {
            "protoc is not installed: these tests need Debian's protobuf-compiler (apt-get install -y protobuf-compiler)"
        }
    }

    private static func findProtoc() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") + ["/usr/bin", "/usr/local/bin"] {
            let candidate = "\(dir)/protoc"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs protoc in the fixtures directory with `input` on stdin; its stdout.
    @discardableResult
    private func protoc(_ arguments: [String], input: [UInt8] = [], file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        guard let protoc = Self.findProtoc() else {
            XCTFail(ProtocMissing().description, file: file, line: line)
            throw ProtocMissing()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: protoc)
        process.arguments = ["-I", Self.fixtures.path] + arguments
        process.currentDirectoryURL = Self.fixtures
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            let text = String(decoding: errors, as: UTF8.self)
            XCTFail("protoc \(arguments.joined(separator: " ")) failed: \(text)", file: file, line: line)
            throw ProtocMissing()
        }
        return [UInt8](output)
    }

    private func descriptorSet() throws -> [UInt8] {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("lunet-protobuf-\(getpid())-\(UUID().uuidString).pb")
        defer { try? FileManager.default.removeItem(at: out) }
        try protoc(["--descriptor_set_out=\(out.path)", "--include_imports", "test.proto"])
        return [UInt8](try Data(contentsOf: out))
    }

    private func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Self.fixtures.appendingPathComponent(name)))
    }

    /// protoc --encode of a text-format fixture.
    private func encodeWithProtoc(_ text: String, as message: String = "lunet.test.Everything") throws -> [UInt8] {
        try protoc(["--encode=\(message)", "test.proto"], input: try fixture(text))
    }

    private func decodeWithProtoc(_ bytes: [UInt8], as message: String = "lunet.test.Everything") throws -> String {
        String(decoding: try protoc(["--decode=\(message)", "test.proto"], input: bytes), as: UTF8.self)
    }

    /// Loads the schema into the global `schema` (and its bytes into `DESC`).
    private func loadSchema() throws {
        setGlobal("DESC", try descriptorSet())
        lua("schema = protobuf.load(DESC)")
    }

    // MARK: Lua helpers

    private func setGlobal(_ name: String, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { lunet_pushbytes(L, $0.baseAddress, $0.count) }
        lua_setglobal(L, name)
    }

    private func global(_ name: String) -> [UInt8]? {
        defer { lua_settop(L, -2) }
        guard lua_getglobal(L, name) == LUA_TSTRING, let b = LuaStack(L).bytes(-1) else { return nil }
        return [UInt8](b)
    }





    /// Decodes with the Swift entry point (no schema); checks the stack discipline.
    private func rawDecode(_ bytes: [UInt8]) -> (ok: Bool, message: String, position: Int?) {
        let top = lua_gettop(L)
        let status = bytes.withUnsafeBytes { ProtobufModule.decode(L, $0) }
        XCTAssertEqual(lua_gettop(L), top + 1, "decode must leave exactly one value")
        defer { lua_settop(L, top) }
        if status == 1 {
            XCTAssertEqual(lua_type(L, -1), LUA_TTABLE)
            return (true, "", nil)
        }
        XCTAssertEqual(status, LUNET_RAISE)
        return (false, describeError(-1), LuaStack(L).integerField(-1, "position"))
    }

    // MARK: - With a schema, against protoc

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

    func testSchemaListsMessagesAndReportsUnknownNames() throws {
        try loadSchema()
        XCTAssertEqual(lua("return table.concat(schema:messages(), ' ')"),
                       "legacy.Old legacy.Old.Legacy lunet.test.Everything lunet.test.Everything.Nested lunet.test.Everything.Nested.Inner lunet.test.Item lunet.test.Node lunet.test.Scalars lunet.test.Subset")
        XCTAssertEqual(lua("return tostring(schema)"), "protobuf.schema (9 messages)")
        XCTAssertEqual(lua(#"return schema:decode("", ".lunet.test.Item").id"#), nil)
        let e = luaError(#"schema:decode("", "lunet.test.Nope")"#)
        XCTAssertEqual(e?.kind, "argument")
        XCTAssertEqual(e?.message, "bad argument #2 to 'decode' (unknown message 'lunet.test.Nope' (schema:messages() lists the 9 it has))")
        XCTAssertEqual(luaError(#"schema.decode("x", "lunet.test.Item")"#)?.message,
                       "bad self to 'decode' (a protobuf schema expected, got string; call it as schema:decode(...))")
        XCTAssertEqual(luaError(#"schema:decode("", "lunet.test.Item", { max_deph = 3 })"#)?.message,
                       "bad argument #3 to 'decode' (unknown option 'max_deph' (known: 'max_depth', 'unknown', 'defaults'))")
        XCTAssertEqual(luaError(#"schema:encode("x", "lunet.test.Item")"#)?.message,
                       "bad argument #1 to 'encode' (table expected, got string)")
    }

    func testLoadRejectsWhatIsNotADescriptorSet() throws {
        var e = luaError(#"protobuf.load("")"#)
        XCTAssertEqual(e?.kind, "decode")
        XCTAssertTrue(e?.message.contains("holds no messages") == true, e?.message ?? "")
        e = luaError(#"protobuf.load("syntax = \"proto3\";")"#)
        XCTAssertEqual(e?.kind, "decode")
        XCTAssertTrue(e?.message.hasPrefix("protobuf: cannot read the descriptor set") == true, e?.message ?? "")
        XCTAssertNotNil(e?.position)
        XCTAssertEqual(luaError("protobuf.load(42)")?.kind, "argument")
        // Without --include_imports the imported file is missing: the error says so.
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("lunet-protobuf-noimports-\(getpid()).pb")
        defer { try? FileManager.default.removeItem(at: out) }
        try protoc(["--descriptor_set_out=\(out.path)", "test.proto"])
        setGlobal("PARTIAL", [UInt8](try Data(contentsOf: out)))
        e = luaError("protobuf.load(PARTIAL)")
        XCTAssertEqual(e?.kind, "decode")
        XCTAssertEqual(e?.message, "protobuf: the field lunet.test.Everything.old names the type .legacy.Old, which the descriptor set does not hold (was it made with --include_imports?)")
    }

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

    // MARK: - Without a schema

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

    // MARK: - Malformed input

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
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ n: Int) -> Int {
            seed ^= seed << 13
            seed ^= seed >> 7
            seed ^= seed << 17
            return Int(seed % UInt64(n))
        }
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

    func testSwiftEntryPointKeepsTheStack() {
        XCTAssertTrue(rawDecode([0x08, 0x96, 0x01]).ok)
        XCTAssertTrue(rawDecode([]).ok)
        let bad = rawDecode([0x08, 0x96])
        XCTAssertFalse(bad.ok)
        XCTAssertEqual(bad.message, "decode: protobuf: truncated varint (field 1) at byte 2")
        XCTAssertEqual(bad.position, 2)
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
