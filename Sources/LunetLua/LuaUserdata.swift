import CLunetLua
import LunetLuaStack

/// Swift objects held by Lua: a full userdata holding one retained reference, and beside it the
/// tag of its kind. `__gc` and `__close` release it exactly once (the slot is cleared on
/// release), so a closed handle that is later collected is not released twice.
public enum LuaUserdata {
    /// Boxes alive right now, in every state: tests assert that closing a state frees them all.
    nonisolated(unsafe) public private(set) static var live = 0

    /// A kind of boxed object: the name of its metatable (in the registry; `__name` for
    /// messages), and, as its tag, the address of this object. Kinds are made once, as `static
    /// let`s, and live as long as the process. `get` knows a box of its kind by the tag stored in
    /// the box, one comparison, where looking its metatable up by name (luaL_testudata) hashed
    /// and found the name in the registry on every call (two calls of every request).
    public final class Kind: Sendable {
        public let name: String
        public init(_ name: String) { self.name = name }
        fileprivate var tag: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }
    }

    /// The box: the retained object, then its kind's tag.
    private static let boxSize = 2 * MemoryLayout<UnsafeRawPointer?>.size

    public static func push(_ L: OpaquePointer, _ object: AnyObject, metatable kind: Kind) {
        let box = lunet_newuserdata(L, boxSize, 0)!   // no user value: nothing uses one
        box.storeBytes(of: Unmanaged.passRetained(object).toOpaque(), as: UnsafeMutableRawPointer?.self)
        box.storeBytes(of: kind.tag, toByteOffset: MemoryLayout<UnsafeRawPointer?>.size, as: UnsafeRawPointer?.self)
        live += 1
        pushMetatable(L, kind)
        lua_setmetatable(L, -2)
    }

    /// The object boxed at `index` if it is a box of `kind`, else nil (any other value: a
    /// string, a table, another library's userdata, a box of another kind, a closed box).
    public static func get<T: AnyObject>(_ L: OpaquePointer, _ index: Int32, _ type: T.Type, metatable kind: Kind) -> T? {
        guard lua_type(L, index) == LUA_TUSERDATA, lua_rawlen(L, index) == boxSize, let box = lua_touserdata(L, index),
              box.load(fromByteOffset: MemoryLayout<UnsafeRawPointer?>.size, as: UnsafeRawPointer?.self) == kind.tag,
              let raw = box.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue() as? T
    }

    /// Pushes the metatable of `kind`'s boxes (registered under its name), making it on first
    /// use with __gc, __close, __name and the kind's tag. Callers add methods to it (it is an
    /// ordinary table in the registry).
    public static func pushMetatable(_ L: OpaquePointer, _ kind: Kind) {
        // Found by the kind's tag, a pointer: no key string hashed, as a lookup by name would
        // (every response pushes its box).
        if lua_rawgetp(L, lunet_registryindex(), kind.tag) == LUA_TTABLE { return }
        let s = LuaStack(L)
        s.pop()
        s.newTable(hash: 4)
        s.pushFunction(release)
        s.setRawField(-2, "__gc")
        s.pushFunction(release)
        s.setRawField(-2, "__close")
        s.push(kind.name)
        s.setRawField(-2, "__name")
        lua_pushlightuserdata(L, UnsafeMutableRawPointer(mutating: kind.tag))
        lua_rawsetp(L, -2, tagKey)
        s.pushValue(-1)
        s.setRawField(lunet_registryindex(), kind.name)
        s.pushValue(-1)
        lua_rawsetp(L, lunet_registryindex(), kind.tag)
    }

    /// Where a box's metatable keeps its kind's tag, for `release`: a light userdata key (the
    /// address of this byte), which no Lua code can name and no lookup has to hash.
    nonisolated(unsafe) private static let tagKey = UnsafeRawPointer(UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1))

    /// __gc and __close. Anyone can call them (`getmetatable(box).__close(v)`) with any value:
    /// only a box whose tag is its metatable's is released (another library's userdata of the
    /// same size, io.stdout say, is left alone: its first word is no Swift object).
    private static let release: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_type(L, 1) == LUA_TUSERDATA, let slot = lua_touserdata(L, 1),
              lua_rawlen(L, 1) == boxSize, lua_getmetatable(L, 1) != 0 else { return 0 }
        lua_rawgetp(L, -1, tagKey)
        let tag = lua_touserdata(L, -1)
        lua_settop(L, 1)
        guard let tag, UnsafeRawPointer(tag) == slot.load(fromByteOffset: MemoryLayout<UnsafeRawPointer?>.size, as: UnsafeRawPointer?.self) else { return 0 }
        if let raw = slot.load(as: UnsafeMutableRawPointer?.self) {
            slot.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
            Unmanaged<AnyObject>.fromOpaque(raw).release()
            live -= 1
        }
        return 0
    }
}
