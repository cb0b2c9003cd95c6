import CLunetLua
import LunetLuaStack
import LunetCore

/// The `protobuf` module: `decode`, `encode` (no schema), `load` (a schema from a descriptor
/// set, with `decode`, `encode`, `messages` methods). API.md, "Serializers"; the rules are in
/// docs/protobuf.md. Every function is a Swift function behind the trampoline.
public enum ProtobufModule {
    /// The schema userdata's metatable, in the registry.
    static let schemaMetatableKey = "lunet.protobuf.schema"

    /// Pushes the module table.
    public static func pushModule(_ L: OpaquePointer) {
        let s = LuaStack(L)
        lua_createtable(L, 0, 3)
        s.pushFunction(decodeFunction)
        s.setRawField(-2, "decode")
        s.pushFunction(encodeFunction)
        s.setRawField(-2, "encode")
        s.pushFunction(loadFunction)
        s.setRawField(-2, "load")
    }

    /// Decodes protobuf bytes without a schema (the shape of `protobuf.decode(bytes)`) and
    /// pushes the table, returning 1; or pushes a `decode` error object and returns
    /// LUNET_RAISE. The stack is exactly one value higher either way. Never raises.
    public static func decode(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        PBRawDecoder.decode(L, bytes, PBRawDecoder.Options())
    }

    // MARK: - Without a schema

    /// protobuf.decode(bytes [, { single = bool, guess = bool, max_depth = n }]) -> table
    static let decodeFunction: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_type(L, 1) == LUA_TSTRING else {
            return LuaErrorObject.badArgument(L, 1, "decode", "string expected, got \(typeName(L, 1))")
        }
        var options = PBRawDecoder.Options()
        if let status = CodecOptions.check(L, 2, "decode", known: ["single", "guess", "max_depth"]) { return status }
        if lua_type(L, 2) == LUA_TTABLE {
            switch CodecOptions.bool(L, 2, "decode", "single") {
            case .failed(let status): return status
            case .value(let v): options.single = v
            case .absent: break
            }
            switch CodecOptions.bool(L, 2, "decode", "guess") {
            case .failed(let status): return status
            case .value(let v): options.guess = v
            case .absent: break
            }
            switch CodecOptions.maxDepth(L, 2, "decode", allowingZero: true) {
            case .failed(let status): return status
            case .value(let v): options.maxDepth = v
            case .absent: break
            }
        }
        var length = 0
        let p = lunet_tolstring(L, 1, &length)!
        return PBRawDecoder.decode(L, UnsafeRawBufferPointer(start: p, count: length), options)
    }

    /// protobuf.encode(t [, { max_depth = n }]) -> bytes
    static let encodeFunction: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_type(L, 1) == LUA_TTABLE else {
            return LuaErrorObject.badArgument(L, 1, "encode", "table expected, got \(typeName(L, 1))")
        }
        var maxDepth = PBWire.defaultMaxDepth
        if let status = CodecOptions.check(L, 2, "encode", known: ["max_depth"]) { return status }
        if lua_type(L, 2) == LUA_TTABLE {
            switch CodecOptions.maxDepth(L, 2, "encode", allowingZero: true) {
            case .failed(let status): return status
            case .value(let v): maxDepth = v
            case .absent: break
            }
        }
        lua_settop(L, 1)
        var encoder = PBEncoder(L: L, maxDepth: maxDepth)
        defer { encoder.release() }
        let ok = encoder.rawMessage(1)
        return finish(L, &encoder, ok)
    }

    /// Pushes the encoder's bytes (returns 1) or its argument error (returns LUNET_RAISE),
    /// above the function's first `arguments` arguments.
    static func finish(_ L: OpaquePointer, _ encoder: inout PBEncoder, _ ok: Bool, arguments: Int32 = 1) -> Int32 {
        let message = encoder.error
        lua_settop(L, arguments)
        guard ok else {
            return LuaErrorObject.raise(L, .argument, message ?? "protobuf: cannot encode the value")
        }
        lunet_pushbytes(L, encoder.out.base, encoder.out.count)
        return 1
    }

    static func typeName(_ L: OpaquePointer, _ i: Int32) -> String { CodecOptions.typeName(L, i) }
}
