import CLunet
import LunetCore

/// Evaluating one piece of interactive input (a REPL line), as lua5.4's prompt does: as an
/// expression first, else as a statement; input that ends too early asks for more.
extension LuaHost {
    public enum Evaluation { case incomplete, done(ok: Bool) }

    public static var luaRelease: String { String(cString: lunet_lua_release()) }

    public func evaluate(_ code: String) -> Evaluation {
        let s = LuaStack(L)
        pushHostField("compile")
        s.push(code)
        guard lunet_pcall(L, 1, 2) == LUA_OK else {
            reportError(describeError(at: -1))
            s.pop()
            return .done(ok: false)
        }
        // compile returns the chunk, or nil and "incomplete" / an error message.
        if s.type(-2) != LUA_TFUNCTION {
            let message = s.string(-1) ?? "?"
            s.pop(2)
            if message == "incomplete" { return .incomplete }
            reportError(message)
            return .done(ok: false)
        }
        s.pop()
        pushHostField("start")
        lunet_insert(L, -2)
        guard lunet_pcall(L, 1, 1) == LUA_OK else {
            reportError(describeError(at: -1))
            s.pop()
            return .done(ok: false)
        }
        let task = reference()
        loop.run(until: { taskState(task) != "pending" })
        pushHostField("show")
        lunet_getref(L, task)
        release(task)
        guard lunet_pcall(L, 1, 2) == LUA_OK else {
            reportError(describeError(at: -1))
            s.pop()
            return .done(ok: false)
        }
        let ok = s.bool(-2)
        reportList(at: -1)
        s.pop(2)
        return .done(ok: ok)
    }
}
