import CLunetLua

/// json.null and the json.array metatable: one of each per lua_State, in the registry under
/// "lunet.json.null" and "lunet.json.array", made on first use (raw access only).
enum JSONRegistry {
    static let nullKey = "lunet.json.null"
    static let arrayKey = "lunet.json.array"

    /// Pushes json.null: a zero-size userdata whose metatable has __name and __tostring
    /// "json.null". Compare with `v == json.null`.
    static func pushNull(_ L: OpaquePointer) {
        if lunet_rawgetfield(L, lunet_registryindex(), nullKey) == LUA_TUSERDATA { return }
        lunet_pop(L, 1)
        _ = lunet_newuserdata(L, 0, 0)
        lua_createtable(L, 0, 3)
        _ = lua_pushstring(L, "json.null")
        lunet_rawsetfield(L, -2, "__name")
        lunet_pushswiftfunction(L, nullToString, 0)
        lunet_rawsetfield(L, -2, "__tostring")
        _ = lua_pushstring(L, "json.null")
        lunet_rawsetfield(L, -2, "__metatable")
        lua_setmetatable(L, -2)
        lua_pushvalue(L, -1)
        lunet_rawsetfield(L, lunet_registryindex(), nullKey)
    }

    /// Pushes the metatable that marks a table as a JSON array: { __name = "json.array" }.
    static func pushArrayMetatable(_ L: OpaquePointer) {
        if lunet_rawgetfield(L, lunet_registryindex(), arrayKey) == LUA_TTABLE { return }
        lunet_pop(L, 1)
        lua_createtable(L, 0, 1)
        _ = lua_pushstring(L, "json.array")
        lunet_rawsetfield(L, -2, "__name")
        lua_pushvalue(L, -1)
        lunet_rawsetfield(L, lunet_registryindex(), arrayKey)
    }

    static let nullToString: lunet_SwiftFunction = { L in
        _ = lua_pushstring(L!, "json.null")
        return 1
    }
}
