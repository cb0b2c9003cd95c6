import CLunetLua
import Glibc

/// The namespace prefixes in scope while an XML document is decoded. The bindings live on the
/// Lua stack, in fixed slots: a table prefix → URI (the empty string for the default
/// namespace), the undo list of the declarations made (prefix and the URI it replaced, in
/// pairs), and the URI found by the last lookup.
struct XMLNamespaceScope {
    let L: OpaquePointer
    /// The slots of the "ns" key and of "" (the default namespace's key).
    let nsKey: Int32
    let emptyKey: Int32
    /// The slots of the bindings table, the undo list and the last URI looked up.
    let table: Int32
    let undo: Int32
    let cache: Int32

    /// Declarations in the undo list: an element's mark is the count when it opened.
    var undoCount = 0
    /// Changes whenever the bindings do; the last lookup is valid while it has not changed.
    var generation = 0
    var cacheGeneration = -1
    var cachePrefix: UnsafePointer<UInt8>
    var cacheLength = 0
    var cacheBound = false

    init(L: OpaquePointer, nsKey: Int32, emptyKey: Int32, table: Int32, undo: Int32, cache: Int32, anyPointer: UnsafePointer<UInt8>) {
        self.L = L
        self.nsKey = nsKey
        self.emptyKey = emptyKey
        self.table = table
        self.undo = undo
        self.cache = cache
        self.cachePrefix = anyPointer
    }

    /// Whether any declaration is in scope (else only `xml:` is bound).
    var hasDeclarations: Bool { undoCount > 0 }

    /// Sets element.ns to what `prefix` (the first `length` bytes of the tag; none for the
    /// default namespace) is bound to, if anything. The last answer is remembered until the
    /// bindings change: most elements of a document use one or two prefixes.
    @inline(__always)
    mutating func lookUp(_ prefix: UnsafePointer<UInt8>, _ length: Int, _ element: Int32) {
        if cacheGeneration != generation || cacheLength != length || memcmp(prefix, cachePrefix, length) != 0 {
            if length == 0 {
                lua_pushvalue(L, emptyKey)
            } else {
                lua_pushlstring(L, UnsafeRawPointer(prefix).assumingMemoryBound(to: CChar.self), length)
            }
            cacheBound = lua_rawget(L, table) == LUA_TSTRING
            lunet_replace(L, cache)
            cachePrefix = prefix
            cacheLength = length
            cacheGeneration = generation
        }
        if cacheBound {
            lua_pushvalue(L, nsKey)
            lua_pushvalue(L, cache)
            lua_rawset(L, element)
        }
    }

    /// The xmlns attributes among the `count` name/value pairs above `element` take effect:
    /// each binding goes into the scope table, the value it replaces into the undo list.
    mutating func declare(_ element: Int32, _ count: Int) {
        generation &+= 1
        for i in 0..<Int32(count) {
            let k = element + 1 + 2 * i
            var n = 0
            let name = UnsafeRawPointer(lua_tolstring(L, k, &n)!).assumingMemoryBound(to: UInt8.self)
            guard n >= 5 && memcmp(name, "xmlns", 5) == 0 && (n == 5 || (n > 6 && name[5] == UInt8(ascii: ":"))) else { continue }
            if n == 5 {
                lua_pushvalue(L, emptyKey)
            } else {
                lua_pushlstring(L, UnsafeRawPointer(name + 6).assumingMemoryBound(to: CChar.self), n - 6)
            }
            // [prefix]: remember what it was bound to, then bind it (an empty URI unbinds).
            lua_pushvalue(L, -1)
            lua_rawget(L, table)
            lua_rawseti(L, undo, lua_Integer(2 * undoCount + 2))
            lua_pushvalue(L, -1)
            lua_rawseti(L, undo, lua_Integer(2 * undoCount + 1))
            undoCount += 1
            var length = 0
            _ = lua_tolstring(L, k + 1, &length)
            if length == 0 {
                lua_pushnil(L)
            } else {
                lua_pushvalue(L, k + 1)
            }
            lua_rawset(L, table)
        }
    }

    /// Undoes the namespace declarations made since `mark`, latest first.
    @inline(__always)
    mutating func restore(_ mark: Int) {
        if undoCount > mark { generation &+= 1 }
        while undoCount > mark {
            undoCount -= 1
            lua_rawgeti(L, undo, lua_Integer(2 * undoCount + 1))
            lua_rawgeti(L, undo, lua_Integer(2 * undoCount + 2))
            lua_rawset(L, table)
        }
    }
}
