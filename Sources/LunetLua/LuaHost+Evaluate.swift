import CLunetLua
import LunetLuaStack
import LunetCore

/// Interactive input (a prompt line), as lua5.4's prompt reads it: as an expression first, else
/// as a statement; input that ends too early asks for more. A line runs as a host task, so
/// the loop (and what earlier lines started) goes on while it waits.
extension LuaHost {
    public enum LineStart {
        case incomplete
        case failed
        case started(LuaTask)
    }

    public enum Evaluation { case incomplete, done(ok: Bool) }

    public static var luaRelease: String { String(cString: lunet_lua_release()) }

    /// Runs `code` at once, in a protected call of its own: set-up a front end makes (the
    /// prompt's print), which neither waits nor counts as a line typed (the first line is
    /// input#1). An error is reported; false then.
    @discardableResult
    public func runSetup(_ code: String, name: String) -> Bool {
        let s = LuaStack(L)
        var code = code
        let loaded = code.withUTF8 { buf in
            buf.withMemoryRebound(to: CChar.self) { lunet_loadbuffer(L, $0.baseAddress, $0.count, name, "t") }
        }
        guard loaded == LUA_OK, lunet_pcall(L, 0, 0) == LUA_OK else {
            reportError(describeError(at: -1))
            s.pop()
            return false
        }
        return true
    }

    /// Compiles `code` and starts it. A syntax error is reported and gives `.failed`.
    public func startLine(_ code: String) -> LineStart {
        let s = LuaStack(L)
        pushHostField("compile")
        s.push(code)
        guard lunet_pcall(L, 1, 2) == LUA_OK else {
            reportError(describeError(at: -1))
            s.pop()
            return .failed
        }
        // compile returns the chunk, or nil and "incomplete" / an error message.
        if s.type(-2) != LUA_TFUNCTION {
            let message = s.string(-1) ?? "?"
            s.pop(2)
            if message == "incomplete" { return .incomplete }
            reportError(message)
            return .failed
        }
        s.pop()
        pushHostField("start")
        lunet_insert(L, -2)
        guard lunet_pcall(L, 1, 1) == LUA_OK else {
            reportError(describeError(at: -1))
            s.pop()
            return .failed
        }
        return .started(LuaTask(host: self, ref: reference()))
    }

    /// Prints a finished line's values (or its error), sets `_`, and reports failures nobody
    /// looked at. Returns whether the line succeeded.
    public func showLine(_ task: LuaTask, color: Bool, code: String? = nil) -> Bool {
        let s = LuaStack(L)
        pushHostField("show")
        lunet_getref(L, task.ref)
        s.push(color)
        if let code { s.push(code) } else { s.pushNil() }
        guard lunet_pcall(L, 3, 2) == LUA_OK else {
            reportError(describeError(at: -1))
            s.pop()
            return false
        }
        let ok = s.bool(-2)
        reportList(at: -1)
        s.pop(2)
        return ok
    }

    /// Runs one piece of input to the end (piped input, tests).
    public func evaluate(_ code: String, color: Bool = false) -> Evaluation {
        switch startLine(code) {
        case .incomplete: return .incomplete
        case .failed: return .done(ok: false)
        case .started(let task):
            loop.run(until: { task.state != "pending" })
            return .done(ok: showLine(task, color: color, code: code))
        }
    }
}
