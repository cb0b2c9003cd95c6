import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// protobuf.load: the schema's messages, unknown names, and what is not a descriptor set.
final class ProtobufDescriptorTests: ProtobufCodecTestCase {
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
}
