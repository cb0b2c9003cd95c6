import CLunetLua
import XCTest
@testable import LunetLua

/// Runs `code` on `host` as a script; returns its exit status and what it reported.
func runScript(_ host: LuaHost, _ code: String) -> (status: Int32, errors: [String]) {
    var errors: [String] = []
    let saved = host.reportError
    host.reportError = { errors.append($0) }
    defer { host.reportError = saved }
    let status = host.run(.string(code, name: "=test"))
    return (status, errors)
}

/// A global's value as a string (tests read results back this way).
func global(_ host: LuaHost, _ name: String) -> String? {
    let s = LuaStack(host.L)
    lua_rawgeti(host.L, lunet_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
    s.rawField(-1, name)
    defer { s.pop(2) }
    return s.string(-1)
}

/// Registers a Swift function as a global.
func register(_ host: LuaHost, _ name: String, _ fn: lunet_SwiftFunction) {
    let s = LuaStack(host.L)
    lua_rawgeti(host.L, lunet_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
    s.pushFunction(fn)
    s.setRawField(-2, name)
    s.pop()
}
