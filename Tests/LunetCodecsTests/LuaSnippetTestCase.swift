import CLunetLua
import XCTest

import LunetLuaStack

/// A test case with a bare Lua state (no host, no prelude) and helpers to run snippets in it:
/// what the codec tests (JSON, XML, protobuf) share. Subclasses make `L` in setUp and push
/// their module.
class LuaSnippetTestCase: XCTestCase {
    var L: OpaquePointer!

    /// Makes `L`: a bare state (the standard libraries, no host, no prelude) with the module
    /// table `push` makes as the global `name`.
    func makeState(module name: String, _ push: (OpaquePointer) -> Void) {
        L = lunet_newstate()!
        XCTAssertEqual(lunet_openlibs(L), LUA_OK)
        push(L)
        lua_setglobal(L, name)
    }

    override func tearDown() {
        if L != nil { lunet_closestate(L) }
        L = nil
        super.tearDown()
    }

    /// Runs a chunk; fails the test with the error if it raises. Returns its first result via
    /// tostring, or nil.
    @discardableResult
    func lua(_ code: String, file: StaticString = #filePath, line: UInt = #line) -> String? {
        let top = lua_gettop(L)
        defer { lua_settop(L, top) }
        guard load(code, file: file, line: line) else { return nil }
        guard lunet_pcall(L, 0, 1) == LUA_OK else {
            XCTFail("Lua error: \(describeError(-1))", file: file, line: line)
            return nil
        }
        if lua_type(L, -1) == LUA_TNIL { return nil }
        return luaToString(-1)
    }

    /// Runs a chunk that must raise; returns the error object's fields.
    func luaError(_ code: String, file: StaticString = #filePath, line: UInt = #line) -> (kind: String, message: String, position: Int?)? {
        let top = lua_gettop(L)
        defer { lua_settop(L, top) }
        guard load(code, file: file, line: line) else { return nil }
        guard lunet_pcall(L, 0, 0) != LUA_OK else {
            XCTFail("expected an error from: \(code)", file: file, line: line)
            return nil
        }
        let s = LuaStack(L)
        guard lua_type(L, -1) == LUA_TTABLE else {
            XCTFail("error is not an error object: \(describeError(-1))", file: file, line: line)
            return nil
        }
        return (s.stringField(-1, "kind") ?? "?", s.stringField(-1, "message") ?? "?", s.integerField(-1, "position"))
    }

    func load(_ code: String, file: StaticString, line: UInt) -> Bool {
        var code = code
        let status = code.withUTF8 { buf in
            lunet_loadbuffer(L, UnsafeRawPointer(buf.baseAddress!).assumingMemoryBound(to: CChar.self), buf.count, "=test", "t")
        }
        if status != LUA_OK {
            XCTFail("cannot load chunk: \(describeError(-1))", file: file, line: line)
            lua_settop(L, -2)
            return false
        }
        return true
    }

    func luaToString(_ i: Int32) -> String {
        let i = lua_absindex(L, i)
        lua_getglobal(L, "tostring")
        lua_pushvalue(L, i)
        lua_callk(L, 1, 1, 0, nil)      // tostring of plain values: cannot raise here
        defer { lua_settop(L, -2) }
        return LuaStack(L).string(-1) ?? "?"
    }

    func describeError(_ i: Int32) -> String {
        if lua_type(L, i) == LUA_TTABLE {
            let s = LuaStack(L)
            return "\(s.stringField(i, "kind") ?? "?"): \(s.stringField(i, "message") ?? "?")"
        }
        return LuaStack(L).string(i) ?? "(a \(LuaStack(L).typeName(i)))"
    }
}
