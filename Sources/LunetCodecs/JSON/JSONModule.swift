import CLunetLua
import LunetLuaStack
import LunetCore

/// The `json` module: `encode`, `decode`, `null`, `array`, `is_array` (API.md, "Serializers";
/// the rules are in docs/json.md). Every function is a Swift function behind the trampoline.
public enum JSONModule {
    /// Pushes the module table.
    public static func pushModule(_ L: OpaquePointer) {
        lua_createtable(L, 0, 6)
        let s = LuaStack(L)
        s.pushFunction(encode)
        s.setRawField(-2, "encode")
        s.pushFunction(decode)
        s.setRawField(-2, "decode")
        s.pushFunction(array)
        s.setRawField(-2, "array")
        s.pushFunction(isArray)
        s.setRawField(-2, "is_array")
        JSONRegistry.pushNull(L)
        s.setRawField(-2, "null")
    }

    /// json.encode(value [, { pretty = bool, sort_keys = bool }]) -> string
    static let encode: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_gettop(L) >= 1 else { return LuaErrorObject.badArgument(L, 1, "encode", "value expected") }
        var options = LuaJSONEncoder.Options()
        if lua_type(L, 2) > LUA_TNIL {
            if let status = CodecOptions.check(L, 2, "encode", known: ["pretty", "sort_keys"]) { return status }
            for name in ["pretty", "sort_keys"] {
                switch CodecOptions.bool(L, 2, "encode", name) {
                case .absent: continue
                case .value(let on): if name == "pretty" { options.pretty = on } else { options.sortKeys = on }
                case .failed(let status): return status
                }
            }
        }
        var writer = JSONWriter()
        writer.owner = "json.encode"
        defer { writer.release() }
        if let error = LuaJSONEncoder.encode(L, index: 1, options: options, writer: &writer) {
            LuaErrorObject.push(L, error)
            return LUNET_RAISE
        }
        return writer.pushResult(L)
    }

    /// json.decode(string [, { max_depth = n }]) -> value
    static let decode: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_type(L, 1) == LUA_TSTRING else {
            return LuaErrorObject.badArgument(L, 1, "decode", "string expected, got \(typeName(L, 1))")
        }
        var maxDepth = LuaJSONDecoder.defaultMaxDepth
        if lua_type(L, 2) > LUA_TNIL {
            if let status = CodecOptions.check(L, 2, "decode", known: ["max_depth"]) { return status }
            switch CodecOptions.maxDepth(L, 2, "decode") {
            case .absent: break
            case .value(let n): maxDepth = n
            case .failed(let status): return status
            }
        }
        var length = 0
        let text = lunet_tolstring(L, 1, &length)!
        return LuaJSONDecoder.decode(L, UnsafeRawBufferPointer(start: text, count: length), maxDepth: maxDepth)
    }

    /// json.array([t]) -> t, marked to encode as a JSON array (a new table when t is nil).
    static let array: lunet_SwiftFunction = { L in
        let L = L!
        switch lua_type(L, 1) {
        case LUA_TNONE, LUA_TNIL:
            lua_settop(L, 0)
            lua_createtable(L, 0, 0)
        case LUA_TTABLE:
            lua_settop(L, 1)
            if lua_getmetatable(L, 1) != 0 {
                JSONRegistry.pushArrayMetatable(L)
                let same = lua_rawequal(L, -1, -2) != 0
                lunet_pop(L, 2)
                if same { return 1 }
                return LuaErrorObject.badArgument(L, 1, "array", "the table already has a metatable")
            }
        default:
            return LuaErrorObject.badArgument(L, 1, "array", "table or nil expected, got \(typeName(L, 1))")
        }
        JSONRegistry.pushArrayMetatable(L)
        lua_setmetatable(L, 1)
        return 1
    }

    /// json.is_array(v) -> whether v is a table marked as a JSON array (by json.array, or by
    /// json.decode for a JSON array).
    static let isArray: lunet_SwiftFunction = { L in
        let L = L!
        var marked = false
        if lua_type(L, 1) == LUA_TTABLE && lua_getmetatable(L, 1) != 0 {
            JSONRegistry.pushArrayMetatable(L)
            marked = lua_rawequal(L, -1, -2) != 0
            lunet_pop(L, 2)
        }
        lua_pushboolean(L, marked ? 1 : 0)
        return 1
    }

    static func typeName(_ L: OpaquePointer, _ i: Int32) -> String { CodecOptions.typeName(L, i) }
}
