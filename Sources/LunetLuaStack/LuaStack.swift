import CLunetLua
import LunetCore

/// Reading and writing a Lua stack from Swift without anything that can raise: raw table access
/// (no metamethods), no luaL_check*, and pushes that cannot fail (the allocator aborts on
/// exhaustion instead of raising). Every binding goes through these. @inlinable: they are thin
/// wrappers over the C API, called from the host and the codecs in other modules, where a call
/// per stack operation would cost what inlining saves.
public struct LuaStack {
    public let L: OpaquePointer

    @inlinable @inline(__always) public init(_ L: OpaquePointer) { self.L = L }

    @inlinable public var top: Int32 { lua_gettop(L) }
    @inlinable @inline(__always) public func type(_ i: Int32) -> Int32 { lua_type(L, i) }
    @inlinable public func typeName(_ i: Int32) -> String { String(cString: lua_typename(L, lua_type(L, i))) }
    @inlinable public func isNil(_ i: Int32) -> Bool { lua_type(L, i) <= LUA_TNIL }
    @inlinable public func absolute(_ i: Int32) -> Int32 { lua_absindex(L, i) }
    @inlinable public func pop(_ n: Int32 = 1) { lunet_pop(L, n) }
    /// Room for `n` more values; false when the stack cannot grow (the caller reports it).
    @inlinable public func ensure(_ n: Int32) -> Bool { lua_checkstack(L, n) != 0 }

    // MARK: reading

    /// A string (or a number, as Lua would convert it) as Swift text.
    @inlinable public func string(_ i: Int32) -> String? {
        let t = lua_type(L, i)
        guard t == LUA_TSTRING || t == LUA_TNUMBER else { return nil }
        var len = 0
        guard let p = lunet_tolstring(L, i, &len) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: p, count: len), as: UTF8.self)
    }

    /// A string's bytes, valid while the string stays on the stack.
    @inlinable public func bytes(_ i: Int32) -> UnsafeRawBufferPointer? {
        guard lua_type(L, i) == LUA_TSTRING else { return nil }
        var len = 0
        guard let p = lunet_tolstring(L, i, &len) else { return nil }
        return UnsafeRawBufferPointer(start: p, count: len)
    }

    @inlinable public func integer(_ i: Int32) -> Int? {
        var isnum: Int32 = 0
        let v = lunet_tointegerx(L, i, &isnum)
        return isnum != 0 ? Int(v) : nil
    }

    @inlinable public func number(_ i: Int32) -> Double? {
        guard lua_type(L, i) == LUA_TNUMBER else { return nil }
        return lunet_tonumberx(L, i, nil)
    }

    @inlinable public func bool(_ i: Int32) -> Bool { lua_toboolean(L, i) != 0 }

    // MARK: writing

    @inlinable public func pushNil() { lua_pushnil(L) }
    @inlinable public func push(_ v: Bool) { lua_pushboolean(L, v ? 1 : 0) }
    @inlinable public func push(_ v: Int) { lua_pushinteger(L, lua_Integer(v)) }
    @inlinable public func push(_ v: Double) { lua_pushnumber(L, v) }
    @inlinable public func push(_ s: String) {
        var s = s
        s.withUTF8 { buf in lunet_pushbytes(L, buf.baseAddress, buf.count) }
    }
    @inlinable public func push(bytes: UnsafeRawBufferPointer) {
        lunet_pushbytes(L, bytes.baseAddress, bytes.count)
    }
    @inlinable public func push(_ b: ByteBuffer) {
        lunet_pushbytes(L, b.base, b.count)
    }
    @inlinable public func pushValue(_ i: Int32) { lua_pushvalue(L, i) }
    @inlinable public func newTable(array: Int32 = 0, hash: Int32 = 0) { lua_createtable(L, array, hash) }
    @inlinable public func pushFunction(_ fn: lunet_SwiftFunction, upvalues: Int32 = 0) { lunet_pushswiftfunction(L, fn, upvalues) }

    // MARK: tables, raw

    // Keys go to C through withCString: handing a String straight to a `const char *` parameter
    // copies it into a new array on every call (two allocations), and bindings read ~30 fields
    // per request.

    /// Pushes t[k] (raw) and returns its type.
    @discardableResult
    @inlinable public func rawField(_ t: Int32, _ k: String) -> Int32 { k.withCString { lunet_rawgetfield(L, t, $0) } }
    /// t[k] = the value on top (raw), popping it.
    @inlinable public func setRawField(_ t: Int32, _ k: String) { k.withCString { lunet_rawsetfield(L, t, $0) } }
    /// t[n] = the value on top (raw), popping it.
    @inlinable public func setRawIndex(_ t: Int32, _ n: Int) { lua_rawseti(L, t, lua_Integer(n)) }
    @discardableResult
    @inlinable public func rawIndex(_ t: Int32, _ n: Int) -> Int32 { lua_rawgeti(L, t, lua_Integer(n)) }
    @inlinable public func rawLength(_ i: Int32) -> Int { Int(lua_rawlen(L, i)) }

    @inlinable public func stringField(_ t: Int32, _ k: String) -> String? {
        rawField(t, k); defer { pop() }
        return string(-1)
    }
    @inlinable public func numberField(_ t: Int32, _ k: String) -> Double? {
        rawField(t, k); defer { pop() }
        return number(-1)
    }
    @inlinable public func integerField(_ t: Int32, _ k: String) -> Int? {
        rawField(t, k); defer { pop() }
        return integer(-1)
    }
    /// nil when absent, else its truth.
    @inlinable public func boolField(_ t: Int32, _ k: String) -> Bool? {
        rawField(t, k); defer { pop() }
        return isNil(-1) ? nil : bool(-1)
    }

    /// Sets t[k] for common Swift values.
    @inlinable public func set(_ t: Int32, _ k: String, _ v: String?) { let t = absolute(t); if let v { push(v) } else { pushNil() }; setRawField(t, k) }
    @inlinable public func set(_ t: Int32, _ k: String, _ v: Int) { let t = absolute(t); push(v); setRawField(t, k) }
    @inlinable public func set(_ t: Int32, _ k: String, _ v: Double) { let t = absolute(t); push(v); setRawField(t, k) }
    @inlinable public func set(_ t: Int32, _ k: String, _ v: Bool) { let t = absolute(t); push(v); setRawField(t, k) }

    /// Walks a table's pairs raw. `body` sees the key at -2 and the value at -1 and must leave
    /// the stack as it found it.
    @inlinable public func forEach(_ t: Int32, _ body: () -> Void) {
        let t = absolute(t)
        lua_pushnil(L)
        while lua_next(L, t) != 0 {
            body()
            pop()
        }
    }

    // MARK: registry

    @discardableResult
    @inlinable public func registryField(_ k: String) -> Int32 { k.withCString { lunet_rawgetfield(L, lunet_registryindex(), $0) } }
}
