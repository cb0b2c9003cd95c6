import CLunetLua
import LunetCore
import LunetLua

/// `require "lunet"` in a stock lua5.4: one host per state, attached to it (lunet's Lua in its
/// package.preload, no globals), kept alive by a registry box whose __gc closes the host when
/// the interpreter closes the state.
@_cdecl("lunet_module_open")
public func lunetModuleOpen(_ L: OpaquePointer?) -> Int32 {
    guard let L else { return -1 }
    let s = LuaStack(L)
    if s.registryField("lunet.module") == LUA_TTABLE { return 1 }
    s.pop()
    let host: LuaHost
    do {
        host = try LuaHost(attachingTo: L)
    } catch {
        s.push("lunet: \(error)")
        return -1
    }
    LuaUserdata.push(L, host, metatable: moduleHostKind)
    s.setRawField(lunet_registryindex(), "lunet.host")
    switch host.callModuleRaw("lunet.module") {
    case true:
        s.pushValue(-1)
        s.setRawField(lunet_registryindex(), "lunet.module")
        return 1
    case false:
        return -1   // the error message is on the stack
    }
}

/// The registry box that keeps a module's host alive (its __gc closes the host).
private let moduleHostKind = LuaUserdata.Kind("lunet.ModuleHost")
