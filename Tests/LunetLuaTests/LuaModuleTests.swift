import CLunetLua
import CLunetModule
import XCTest
@testable import LunetLua

/// The Lua module's entry, as a stock interpreter calls it: states opened and closed in a row,
/// nothing left behind.
final class LuaModuleTests: XCTestCase {
    func testThreeStatesInARowLeaveNothingBehind() {
        let boxesBefore = LuaUserdata.live
        for i in 1...3 {
            let L = lunet_newstate()!
            XCTAssertEqual(lunet_openlibs(L), LUA_OK)
            let code = """
                package.preload.lunet = ...
                local lunet = require "lunet"
                assert(require("lunet") == lunet, "one module per state")
                assert(http == nil, "no globals in module mode")
                local ok, e = pcall(lunet.http.get, 42)
                assert(not ok and e.kind == "argument", "an argument error as an object")
                return lunet.json.encode({ n = \(i) }) .. " " .. tostring(lunet.task.resolved(\(i)):await())
                """
            XCTAssertEqual(code.withCString { lunet_loadbuffer(L, $0, strlen($0), "=module-test", "t") }, LUA_OK)
            lua_pushcclosure(L, luaopen_lunet, 0)
            XCTAssertEqual(lunet_pcall(L, 1, 1), LUA_OK, LuaStack(L).string(-1) ?? "?")
            XCTAssertEqual(LuaStack(L).string(-1), "{\"n\":\(i)} \(i)")
            lunet_closestate(L)
        }
        XCTAssertEqual(LuaUserdata.live, boxesBefore, "every Swift object the module made was released")
    }
}
