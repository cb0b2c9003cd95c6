import CLunetLua
import LunetLuaStack
import LunetCore

/// Running code: a script file, a string, or a loaded chunk, each as the main host coroutine,
/// with the loop turning until it and everything it started have finished.
extension LuaHost {
    public enum Source {
        case file(String)
        case string(String, name: String)
    }

    /// Loads `source` and runs it with `arguments` as `...`. Returns the exit status:
    /// 0, or 1 after printing the error and its traceback to standard error.
    public func run(_ source: Source, arguments: [String] = []) -> Int32 {
        let s = LuaStack(L)
        let status: Int32
        switch source {
        case .file(let path):
            // A chunk named "@lua/lunet/..." is lunet's own (lunet.core_guard): a script at that
            // relative path is named "@./lua/lunet/..." instead.
            let named = path.hasPrefix("lua/lunet/") ? "./" + path : path
            status = path == "-" ? luaL_loadfilex(L, nil, "t") : luaL_loadfilex(L, named, "t")
        case .string(let code, let name):
            var code = code
            status = code.withUTF8 { buf in
                buf.withMemoryRebound(to: CChar.self) { lunet_loadbuffer(L, $0.baseAddress, $0.count, name, "t") }
            }
        }
        guard status == LUA_OK else {
            reportError(s.string(-1) ?? "could not load the chunk")
            s.pop()
            return 1
        }
        for a in arguments { s.push(a) }
        return runLoaded(argumentCount: Int32(arguments.count))
    }

    /// Runs the function on top of the stack (with `argumentCount` arguments above it).
    func runLoaded(argumentCount: Int32) -> Int32 {
        let s = LuaStack(L)
        let base = s.top - argumentCount   // the function
        pushHostField("start")
        lunet_insert(L, base)
        guard lunet_pcall(L, argumentCount + 1, 1) == LUA_OK else {
            reportError(describeError(at: -1))
            s.pop()
            return 1
        }
        let mainTask = reference()
        // Turn until the script and what it started are done; stop early if it failed.
        loop.run(until: { taskState(mainTask) == "failed" })
        pushHostField("finish")
        lunet_getref(L, mainTask)
        release(mainTask)
        guard lunet_pcall(L, 1, 2) == LUA_OK else {
            reportError(describeError(at: -1))
            s.pop()
            return 1
        }
        let code = Int32(s.integer(-2) ?? 1)
        reportList(at: -1)
        s.pop(2)
        return code
    }

    /// Reports each string of the list at `index`.
    func reportList(at index: Int32) {
        let s = LuaStack(L)
        let n = s.rawLength(index)
        guard n > 0 else { return }
        for i in 1...n {
            s.rawIndex(index, i)
            if let text = s.string(-1) { reportError(text) }
            s.pop()
        }
    }

    func taskState(_ ref: Int32) -> String? {
        let s = LuaStack(L)
        lunet_getref(L, ref)
        defer { s.pop() }
        return s.stringField(-1, "state")
    }

    /// Sets the global `arg` as lua5.4 does: arg[0] the script, arg[1...] its arguments,
    /// negative indices the interpreter and options before the script.
    /// `raw`, when given, holds each argument's bytes as the process got them (a script's
    /// argument need not be UTF-8: `$'\\xff'` stays one byte 0xff, never U+FFFD); the strings
    /// are pushed otherwise.
    public func setScriptArguments(interpreter: [String], script: String, arguments: [String], raw: [[UInt8]]? = nil) {
        let s = LuaStack(L)
        s.newTable(array: Int32(arguments.count), hash: Int32(interpreter.count + 1))
        for (i, a) in interpreter.enumerated() {
            s.push(a)
            s.setRawIndex(-2, i - interpreter.count)
        }
        s.push(script)
        s.setRawIndex(-2, 0)
        if let raw, raw.count == arguments.count {
            for (i, bytes) in raw.enumerated() {
                bytes.withUnsafeBytes { s.push(bytes: $0) }
                s.setRawIndex(-2, i + 1)
            }
        } else {
            for (i, a) in arguments.enumerated() {
                s.push(a)
                s.setRawIndex(-2, i + 1)
            }
        }
        lua_rawgeti(L, lunet_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
        lunet_insert(L, -2)
        s.setRawField(-2, "arg")
        s.pop()
    }
}
