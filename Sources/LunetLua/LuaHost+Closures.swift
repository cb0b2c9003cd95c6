import CLunetLua
import LunetLuaStack
import LunetCore

/// Swift closures as Lua functions, through the same trampoline as every binding: a closure
/// returns a result count, or throws, and the error is raised after its frame has returned.
extension LuaHost {
    /// What a closure registered for Lua receives: the stack (arguments at 1...top).
    public typealias Function = (LuaStack) throws -> Int32

    final class ClosureBox {
        static let metatable = LuaUserdata.Kind("lunet.SwiftClosure")
        let body: Function
        init(_ body: @escaping Function) { self.body = body }
    }

    private static let callClosure: lunet_SwiftFunction = { L in
        let L = L!
        guard let box = LuaUserdata.get(L, lunet_upvalue(1), ClosureBox.self, metatable: ClosureBox.metatable) else {
            return LuaErrorObject.raise(L, .argument, "a Swift function lost its closure")
        }
        do {
            return try box.body(LuaStack(L))
        } catch let error as LunetError {
            LuaErrorObject.push(L, error)
            return LUNET_RAISE
        } catch {
            LuaStack(L).push(String(describing: error))
            return LUNET_RAISE
        }
    }

    /// Pushes a Lua function that calls `body` (on `thread`'s stack, the main thread's by default).
    public func pushFunction(_ body: @escaping Function, on thread: OpaquePointer? = nil) {
        let L = thread ?? self.L
        LuaUserdata.push(L, ClosureBox(body), metatable: ClosureBox.metatable)
        lunet_pushswiftfunction(L, Self.callClosure, 1)
    }

    /// Sets global `name` to a Lua function that calls `body`.
    public func register(_ name: String, _ body: @escaping Function) {
        lua_rawgeti(L, lunet_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
        pushFunction(body)
        LuaStack(L).setRawField(-2, name)
        LuaStack(L).pop()
    }

    /// Sets global `name` to a table of functions (a module); `require(name)` finds it too.
    public func registerModule(_ name: String, _ functions: [String: Function]) {
        let s = LuaStack(L)
        s.newTable(hash: Int32(functions.count))
        for (key, body) in functions {
            pushFunction(body)
            s.setRawField(-2, key)
        }
        lua_rawgeti(L, lunet_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
        s.pushValue(-2)
        s.setRawField(-2, name)
        s.pop()
        // package.loaded[name] = module
        s.registryField("_LOADED")
        s.pushValue(-2)
        s.setRawField(-2, name)
        s.pop(2)
    }

    /// Sets a global to a copy of `value`.
    public func setGlobal(_ name: String, _ value: LuaValue) {
        lua_rawgeti(L, lunet_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
        value.push(L)
        LuaStack(L).setRawField(-2, name)
        LuaStack(L).pop()
    }

    /// A copy of a global's value.
    public func global(_ name: String) -> LuaValue {
        lua_rawgeti(L, lunet_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
        LuaStack(L).rawField(-1, name)
        defer { LuaStack(L).pop(2) }
        return LuaValue(L, at: -1)
    }
}
