import CLunetLua
import LunetLuaStack
import LunetCore

extension LuaHost {
    /// Calls `require(module)[function](arguments...)`, protected, on the main thread, and
    /// returns its results as copies (for front ends: completion, commands).
    public func callModule(_ module: String, _ function: String, _ arguments: [LuaValue] = []) -> Result<[LuaValue], LuaFailure> {
        let s = LuaStack(L)
        let base = s.top
        defer { lua_settop(L, base) }
        guard s.ensure(Int32(arguments.count) + 8) else { return .failure(.script("the Lua stack is full")) }
        lua_rawgeti(L, lunet_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
        s.rawField(-1, "require")
        s.push(module)
        guard lunet_pcall(L, 1, 1) == LUA_OK else { return .failure(LuaFailure(L, at: -1)) }
        guard s.type(-1) == LUA_TTABLE, s.rawField(-1, function) == LUA_TFUNCTION else {
            return .failure(.script("\(module).\(function) is not a function"))
        }
        for a in arguments { a.push(L) }
        let first = s.top - Int32(arguments.count)
        guard lunet_pcall(L, Int32(arguments.count), LUA_MULTRET) == LUA_OK else { return .failure(LuaFailure(L, at: -1)) }
        var results: [LuaValue] = []
        var i = first
        while i <= s.top { results.append(LuaValue(L, at: i)); i += 1 }
        return .success(results)
    }
}

extension LuaHost {
    /// Pushes require(module) (true), or an error message (false), on the main thread's stack.
    public func callModuleRaw(_ module: String) -> Bool {
        let s = LuaStack(L)
        lua_rawgeti(L, lunet_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
        s.rawField(-1, "require")
        lunet_remove(L, -2)
        s.push(module)
        if lunet_pcall(L, 1, 1) == LUA_OK { return true }
        let message = describeError(at: -1)
        s.pop()
        s.push(message)
        return false
    }
}
