// fuzz-protobuf: the protobuf decoders on arbitrary bytes, called as scripts call them
// (protobuf.decode, schema:decode through the trampoline), on a fresh bare Lua state per input.
//
// Input: one control byte, then the protobuf bytes.
//   control bit 0 = 0: without a schema; bit 1: single, bit 2: guess, bits 3-4: max_depth 1..4
//                      (else the default) when bit 5 is set.
//   control bit 0 = 1: with the schema of Tests/Fixtures/protobuf/test.proto; bits 1-3 pick the
//                      message; bit 4: unknown = false; bit 5: defaults = true; bit 6: max_depth 3.
// Properties:
// - decoding never crashes and either returns a table or raises a `decode` error object;
// - without a schema, default shape: what decodes encodes (protobuf.encode), and that encoding
//   is canonical: decode + encode gives the same bytes again;
// - with `guess`: what decodes encodes, and the encoding decodes;
// - with a schema (default options): what decodes encodes (schema:encode), and the encoding
//   decodes and encodes to the same bytes again.
@testable import LunetCodecs
import CLunetLua
import FuzzSupport

@_cdecl("fuzz_protobuf_main")
public func main(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    fuzzMain(argc, argv, fuzzProtobuf)
}

/// Loaded once; each state gets a userdata holding it, as protobuf.load makes one.
nonisolated(unsafe) private let schema: PBSchema = {
    do {
        return try testDescriptorSet.withUnsafeBytes { try PBSchema.load($0) }
    } catch {
        fuzzFail("the test descriptor set does not load: \(error)")
    }
}()

private let messages = [
    "lunet.test.Everything", "lunet.test.Scalars", "lunet.test.Item", "lunet.test.Subset",
    "lunet.test.Node", "legacy.Old", "lunet.test.Everything.Nested.Inner", "lunet.test.Everything",
]

/// Pushes a schema userdata for `schema` (what protobuf.load returns).
private func pushSchema(_ L: OpaquePointer) {
    let slot = lunet_newuserdata(L, MemoryLayout<UnsafeMutableRawPointer?>.size, 1)!
    slot.storeBytes(of: Unmanaged.passRetained(schema).toOpaque(), as: UnsafeMutableRawPointer?.self)
    ProtobufModule.pushSchemaMetatable(L)
    lua_setmetatable(L, -2)
    schema.pushNamesTable(L)
    lua_setiuservalue(L, -2, 1)
}

/// Pushes an options table with the given booleans and max_depth.
private func pushOptions(_ L: OpaquePointer, _ flags: [(String, Bool)], maxDepth: Int?) -> Int32 {
    lua_createtable(L, 0, 4)
    for (name, on) in flags {
        lua_pushboolean(L, on ? 1 : 0)
        lunet_rawsetfield(L, -2, name)
    }
    if let maxDepth {
        lua_pushinteger(L, lua_Integer(maxDepth))
        lunet_rawsetfield(L, -2, "max_depth")
    }
    return 1
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProtobuf(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard size > 0, let data else { return 0 }
    let control = data[0]
    let bytes = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    withFuzzState { L in
        ProtobufModule.pushModule(L)            // 1: the module
        let module: Int32 = 1
        if control & 1 == 0 {
            schemaless(L, module, bytes, control)
        } else {
            pushSchema(L)                       // 2: the schema
            fuzzCheck(lua_getmetatable(L, 2) != 0, "the schema has no metatable")
            _ = lunet_rawgetfield(L, -1, "__index")
            lunet_remove(L, -2)                 // 3: its methods
            withSchema(L, 2, methods: 3, bytes, control)
        }
    }
    return 0
}

private func schemaless(_ L: OpaquePointer, _ module: Int32, _ bytes: UnsafeRawBufferPointer, _ control: UInt8) {
    let single = control & 2 != 0, guess = control & 4 != 0
    let maxDepth: Int? = control & 0x20 != 0 ? Int((control >> 3) & 3) + 1 : nil
    let top = lua_gettop(L)
    let decoded = fuzzCall(L, module, "decode") {
        fuzzPushBytes(L, bytes)
        return pushOptions(L, [("single", single), ("guess", guess)], maxDepth: maxDepth) + 1
    }
    fuzzCheck(lua_gettop(L) == top + 1, "protobuf.decode left the stack wrong")
    guard decoded else {
        fuzzCheck(isErrorObject(L, -1, kind: "decode"), "protobuf.decode failed without a decode error: \(luaMessage(L, -1))")
        return
    }
    fuzzCheck(lua_type(L, -1) == LUA_TTABLE, "protobuf.decode did not give a table")
    guard !single else { return }           // the single shape is for reading, not for encode
    let value = lua_gettop(L)

    // What decodes encodes.
    guard fuzzCall(L, module, "encode", { lua_pushvalue(L, value); return 1 }) else {
        fuzzFail("protobuf.encode(protobuf.decode(b)) failed: \(luaMessage(L, -1))")
    }
    let encoded = lua_gettop(L)
    guard fuzzCall(L, module, "decode", {
        lua_pushvalue(L, encoded)
        return pushOptions(L, [("guess", guess)], maxDepth: maxDepth) + 1
    }) else {
        fuzzFail("the canonical encoding does not decode: \(luaMessage(L, -1))")
    }
    guard !guess else { return }            // a guess can go another way on re-encoded bytes
    let second = lua_gettop(L)
    guard fuzzCall(L, module, "encode", { lua_pushvalue(L, second); return 1 }) else {
        fuzzFail("protobuf.encode failed on the second round: \(luaMessage(L, -1))")
    }
    fuzzCheck(luaBytes(L, -1).elementsEqual(luaBytes(L, encoded)), "the canonical encoding is not stable")
}

private func withSchema(_ L: OpaquePointer, _ schemaIndex: Int32, methods: Int32, _ bytes: UnsafeRawBufferPointer, _ control: UInt8) {
    let message = messages[Int((control >> 1) & 7)]
    let keepUnknown = control & 0x10 == 0, defaults = control & 0x20 != 0
    let maxDepth: Int? = control & 0x40 != 0 ? 3 : nil
    let plain = keepUnknown && !defaults && maxDepth == nil
    let top = lua_gettop(L)
    let decoded = fuzzCall(L, methods, "decode") {
        lua_pushvalue(L, schemaIndex)
        fuzzPushBytes(L, bytes)
        lunet_pushbytes(L, message, message.utf8.count)
        return pushOptions(L, [("unknown", keepUnknown), ("defaults", defaults)], maxDepth: maxDepth) + 3
    }
    fuzzCheck(lua_gettop(L) == top + 1, "schema:decode left the stack wrong")
    guard decoded else {
        fuzzCheck(isErrorObject(L, -1, kind: "decode"), "schema:decode failed without a decode error: \(luaMessage(L, -1))")
        return
    }
    fuzzCheck(lua_type(L, -1) == LUA_TTABLE, "schema:decode did not give a table")
    guard plain else { return }
    let value = lua_gettop(L)
    guard fuzzCall(L, methods, "encode", {
        lua_pushvalue(L, schemaIndex); lua_pushvalue(L, value)
        lunet_pushbytes(L, message, message.utf8.count)
        return 3
    }) else {
        fuzzFail("schema:encode(schema:decode(b, \(message))) failed: \(luaMessage(L, -1))")
    }
    let encoded = lua_gettop(L)
    guard fuzzCall(L, methods, "decode", {
        lua_pushvalue(L, schemaIndex); lua_pushvalue(L, encoded)
        lunet_pushbytes(L, message, message.utf8.count)
        return 3
    }) else {
        fuzzFail("schema:encode's bytes do not decode as \(message): \(luaMessage(L, -1))")
    }
    let again = lua_gettop(L)
    guard fuzzCall(L, methods, "encode", {
        lua_pushvalue(L, schemaIndex); lua_pushvalue(L, again)
        lunet_pushbytes(L, message, message.utf8.count)
        return 3
    }) else {
        fuzzFail("schema:encode failed on the second round (\(message)): \(luaMessage(L, -1))")
    }
    fuzzCheck(luaBytes(L, -1).elementsEqual(luaBytes(L, encoded)), "schema:encode is not stable for \(message)")
}
