import CLunet
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
            if let status = checkOptions(L, 2, "encode", known: ["pretty", "sort_keys"]) { return status }
            for name in ["pretty", "sort_keys"] {
                let type = lunet_rawgetfield(L, 2, name)
                let on = lua_toboolean(L, -1) != 0
                lunet_pop(L, 1)
                switch type {
                case LUA_TNIL: continue
                case LUA_TBOOLEAN: if name == "pretty" { options.pretty = on } else { options.sortKeys = on }
                default:
                    let got = String(cString: lua_typename(L, type))
                    return LuaErrorObject.badArgument(L, 2, "encode", "option '\(name)' must be a boolean, got \(got)")
                }
            }
        }
        var writer = JSONWriter()
        defer { writer.release() }
        if let error = LuaJSONEncoder.encode(L, index: 1, options: options, writer: &writer) {
            LuaErrorObject.push(L, error)
            return LUNET_RAISE
        }
        lua_pushlstring(L, UnsafeRawPointer(writer.base!).assumingMemoryBound(to: CChar.self), writer.count)
        return 1
    }

    /// json.decode(string [, { max_depth = n }]) -> value
    static let decode: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_type(L, 1) == LUA_TSTRING else {
            return LuaErrorObject.badArgument(L, 1, "decode", "string expected, got \(typeName(L, 1))")
        }
        var maxDepth = LuaJSONDecoder.defaultMaxDepth
        if lua_type(L, 2) > LUA_TNIL {
            if let status = checkOptions(L, 2, "decode", known: ["max_depth"]) { return status }
            let type = lunet_rawgetfield(L, 2, "max_depth")
            var isInteger: Int32 = 0
            let n = lua_tointegerx(L, -1, &isInteger)
            if type != LUA_TNIL && (type != LUA_TNUMBER || isInteger == 0 || n < 1) {
                let shown = type == LUA_TNUMBER ? (LuaStack(L).string(-1) ?? "?") : "a " + typeName(L, -1)
                lunet_pop(L, 1)
                return LuaErrorObject.badArgument(L, 2, "decode", "option 'max_depth' must be a positive integer, got \(shown)")
            }
            lunet_pop(L, 1)
            if type != LUA_TNIL { maxDepth = Int(min(n, lua_Integer(Int32.max))) }
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

    /// Checks the option table at `index`: nil, or a table whose keys are all in `known`.
    /// Returns nil when it is fine, else the status of the argument error it pushed.
    static func checkOptions(_ L: OpaquePointer, _ index: Int32, _ function: String, known: [String]) -> Int32? {
        switch lua_type(L, index) {
        case LUA_TNONE, LUA_TNIL:
            return nil
        case LUA_TTABLE:
            break
        default:
            return LuaErrorObject.badArgument(L, Int(index), function, "options table expected, got \(typeName(L, index))")
        }
        let s = LuaStack(L)
        lua_pushnil(L)
        while lua_next(L, index) != 0 {
            lunet_pop(L, 1)
            if lua_type(L, -1) == LUA_TSTRING, let name = s.string(-1), known.contains(name) { continue }
            let shown = lua_type(L, -1) == LUA_TSTRING ? "'\(s.string(-1) ?? "")'" : "of type \(typeName(L, -1))"
            lunet_pop(L, 1)
            let list = known.map { "'\($0)'" }.joined(separator: ", ")
            return LuaErrorObject.badArgument(L, Int(index), function, "unknown option \(shown) (known: \(list))")
        }
        return nil
    }

    static func typeName(_ L: OpaquePointer, _ i: Int32) -> String {
        String(cString: lua_typename(L, lua_type(L, i)))
    }
}

/// json.null and the json.array metatable: one of each per lua_State, in the registry under
/// "lunet.json.null" and "lunet.json.array", made on first use (raw access only).
enum JSONRegistry {
    static let nullKey = "lunet.json.null"
    static let arrayKey = "lunet.json.array"

    /// Pushes json.null: a zero-size userdata whose metatable has __name and __tostring
    /// "json.null". Compare with `v == json.null`.
    static func pushNull(_ L: OpaquePointer) {
        if lunet_rawgetfield(L, lunet_registryindex(), nullKey) == LUA_TUSERDATA { return }
        lunet_pop(L, 1)
        _ = lunet_newuserdata(L, 0, 0)
        lua_createtable(L, 0, 3)
        _ = lua_pushstring(L, "json.null")
        lunet_rawsetfield(L, -2, "__name")
        lunet_pushswiftfunction(L, nullToString, 0)
        lunet_rawsetfield(L, -2, "__tostring")
        _ = lua_pushstring(L, "json.null")
        lunet_rawsetfield(L, -2, "__metatable")
        lua_setmetatable(L, -2)
        lua_pushvalue(L, -1)
        lunet_rawsetfield(L, lunet_registryindex(), nullKey)
    }

    /// Pushes the metatable that marks a table as a JSON array: { __name = "json.array" }.
    static func pushArrayMetatable(_ L: OpaquePointer) {
        if lunet_rawgetfield(L, lunet_registryindex(), arrayKey) == LUA_TTABLE { return }
        lunet_pop(L, 1)
        lua_createtable(L, 0, 1)
        _ = lua_pushstring(L, "json.array")
        lunet_rawsetfield(L, -2, "__name")
        lua_pushvalue(L, -1)
        lunet_rawsetfield(L, lunet_registryindex(), arrayKey)
    }

    static let nullToString: lunet_SwiftFunction = { L in
        _ = lua_pushstring(L!, "json.null")
        return 1
    }
}
