import CLunetLua
import LunetLuaStack

/// Swift objects held by Lua: a full userdata holding one retained reference. `__gc` and
/// `__close` release it exactly once (the slot is cleared on release), so a closed handle that
/// is later collected is not released twice.
public enum LuaUserdata {
    /// Boxes alive right now, in every state: tests assert that closing a state frees them all.
    nonisolated(unsafe) public private(set) static var live = 0

    public static func push(_ L: OpaquePointer, _ object: AnyObject, metatable name: String) {
        let slot = lunet_newuserdata(L, MemoryLayout<UnsafeMutableRawPointer?>.size, 1)!
        slot.storeBytes(of: Unmanaged.passRetained(object).toOpaque(), as: UnsafeMutableRawPointer?.self)
        live += 1
        pushMetatable(L, name)
        lua_setmetatable(L, -2)
    }

    /// The object boxed at `index` if its metatable is `name`'s, else nil.
    public static func get<T: AnyObject>(_ L: OpaquePointer, _ index: Int32, _ type: T.Type, metatable name: String) -> T? {
        // withCString: a String passed straight to C is copied into a new array on every call.
        guard let slot = name.withCString({ luaL_testudata(L, index, $0) }) else { return nil }
        guard let raw = slot.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue() as? T
    }

    /// Pushes the metatable registered under `name`, making it on first use with __gc, __close
    /// and __name. Callers add methods to it (it is an ordinary table in the registry).
    public static func pushMetatable(_ L: OpaquePointer, _ name: String) {
        let s = LuaStack(L)
        if s.registryField(name) == LUA_TTABLE { return }
        s.pop()
        s.newTable(hash: 4)
        s.pushFunction(release)
        s.setRawField(-2, "__gc")
        s.pushFunction(release)
        s.setRawField(-2, "__close")
        s.push(name)
        s.setRawField(-2, "__name")
        s.pushValue(-1)
        s.setRawField(lunet_registryindex(), name)
    }

    private static let release: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_type(L, 1) == LUA_TUSERDATA, let slot = lua_touserdata(L, 1),
              lua_rawlen(L, 1) == MemoryLayout<UnsafeMutableRawPointer?>.size else { return 0 }
        if let raw = slot.load(as: UnsafeMutableRawPointer?.self) {
            slot.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
            Unmanaged<AnyObject>.fromOpaque(raw).release()
            live -= 1
        }
        return 0
    }
}
