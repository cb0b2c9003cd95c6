import CLunetLua
import LunetLuaStack

/// The option tables of the codecs' Lua functions (`json.decode(s, { max_depth = 10 })`, ...):
/// unknown names are an error, so a typo does not go unnoticed, and every problem is an
/// `argument` error naming the function and the argument.
enum CodecOptions {
    enum Option<T> {
        case absent
        case value(T)
        /// The argument error is pushed; return this status.
        case failed(Int32)
    }

    /// Checks the option table at `index`: nil, or a table whose keys are all in `known`.
    /// Returns nil when it is fine, else the status of the argument error it pushed.
    /// `position` is the argument's number in messages when it is not `index` (a method).
    static func check(_ L: OpaquePointer, _ index: Int32, _ function: String, known: [String], position: Int? = nil) -> Int32? {
        let position = position ?? Int(index)
        switch lua_type(L, index) {
        case LUA_TNONE, LUA_TNIL:
            return nil
        case LUA_TTABLE:
            break
        default:
            return LuaErrorObject.badArgument(L, position, function, "options table expected, got \(typeName(L, index))")
        }
        let s = LuaStack(L)
        lua_pushnil(L)
        while lua_next(L, index) != 0 {
            lunet_pop(L, 1)
            if lua_type(L, -1) == LUA_TSTRING, let name = s.string(-1), known.contains(name) { continue }
            let shown = lua_type(L, -1) == LUA_TSTRING ? "'\(s.string(-1) ?? "")'" : "of type \(typeName(L, -1))"
            lunet_pop(L, 1)
            let list = known.map { "'\($0)'" }.joined(separator: ", ")
            return LuaErrorObject.badArgument(L, position, function, "unknown option \(shown) (known: \(list))")
        }
        return nil
    }

    /// A boolean option of the table at `index`.
    static func bool(_ L: OpaquePointer, _ index: Int32, _ function: String, _ name: String, position: Int? = nil) -> Option<Bool> {
        let type = lunet_rawgetfield(L, index, name)
        let on = lua_toboolean(L, -1) != 0
        lunet_pop(L, 1)
        switch type {
        case LUA_TNIL: return .absent
        case LUA_TBOOLEAN: return .value(on)
        default:
            let got = String(cString: lua_typename(L, type))
            return .failed(LuaErrorObject.badArgument(L, position ?? Int(index), function, "option '\(name)' must be a boolean, got \(got)"))
        }
    }

    /// The `max_depth` option: an integer of at least 1 (at least 0 with `allowingZero`),
    /// capped at Int32.max.
    static func maxDepth(_ L: OpaquePointer, _ index: Int32, _ function: String, position: Int? = nil,
                         allowingZero: Bool = false) -> Option<Int> {
        let type = lunet_rawgetfield(L, index, "max_depth")
        var isInteger: Int32 = 0
        let n = lua_tointegerx(L, -1, &isInteger)
        if type == LUA_TNIL {
            lunet_pop(L, 1)
            return .absent
        }
        if type != LUA_TNUMBER || isInteger == 0 || n < (allowingZero ? 0 : 1) {
            let shown = type == LUA_TNUMBER ? (LuaStack(L).string(-1) ?? "?") : "a " + typeName(L, -1)
            lunet_pop(L, 1)
            let kind = allowingZero ? "non-negative" : "positive"
            return .failed(LuaErrorObject.badArgument(L, position ?? Int(index), function, "option 'max_depth' must be a \(kind) integer, got \(shown)"))
        }
        lunet_pop(L, 1)
        return .value(Int(min(n, lua_Integer(Int32.max))))
    }

    static func typeName(_ L: OpaquePointer, _ i: Int32) -> String {
        String(cString: lua_typename(L, lua_type(L, i)))
    }
}
