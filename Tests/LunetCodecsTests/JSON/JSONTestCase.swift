import CLunetLua
import Foundation
import LunetCore
import XCTest

import LunetCodecs
import LunetLuaStack

/// The JSON codec through the `json` module, on a bare Lua state (no host, no prelude): the
/// state, `deq` (a deep comparison for round trips) and the helpers the JSON tests share.
class JSONCodecTestCase: LuaSnippetTestCase {
    override func setUp() {
        super.setUp()
        makeState(module: "json", JSONModule.pushModule)
        // A deep comparison for round trips (json.null and array marks included).
        lua("""
        function deq(a, b)
          if type(a) ~= type(b) then return false end
          if type(a) == "number" then return math.type(a) == math.type(b) and (a == b or (a ~= a and b ~= b)) end
          if type(a) ~= "table" then return a == b end
          if json.is_array(a) ~= json.is_array(b) then return false end
          for k, v in pairs(a) do if not deq(v, b[k]) then return false end end
          for k in pairs(b) do if a[k] == nil then return false end end
          return true
        end
        """)
    }

    /// Decodes raw bytes with the Swift entry point; checks the stack discipline.
    func decodeBytes(_ bytes: [UInt8], maxDepth: Int = 1000) -> (ok: Bool, message: String) {
        let top = lua_gettop(L)
        let status = bytes.withUnsafeBytes { LuaJSONDecoder.decode(L, $0, maxDepth: maxDepth) }
        XCTAssertEqual(lua_gettop(L), top + 1, "decode must leave exactly one value")
        defer { lua_settop(L, top) }
        if status == 1 { return (true, "") }
        XCTAssertEqual(status, LUNET_RAISE)
        return (false, describeError(-1))
    }

    func roundTrip(_ bytes: [UInt8], _ name: String) {
        let top = lua_gettop(L)
        defer { lua_settop(L, top) }
        _ = bytes.withUnsafeBytes { LuaJSONDecoder.decode(L, $0) }
        let out = ByteBuffer()
        if let error = LuaJSONEncoder.encode(L, index: -1, options: .init(), into: out) {
            XCTFail("\(name): cannot encode what was decoded: \(error)")
            return
        }
        XCTAssertEqual(LuaJSONDecoder.decode(L, UnsafeRawBufferPointer(out.bytes)), 1, "\(name): \(out.string)")
        lua_getglobal(L, "deq")
        lua_pushvalue(L, -3)
        lua_pushvalue(L, -3)
        XCTAssertEqual(lunet_pcall(L, 2, 1), LUA_OK)
        XCTAssertEqual(lua_toboolean(L, -1), 1, "\(name) changed in a round trip: \(out.string)")
    }
}
