import CLunet
import Glibc

// MARK: - Namespaces: the prefixes in scope, in a Lua table with an undo list

extension XMLParser {
    /// Sets element.ns to what `prefix` (the first `length` bytes of the tag; none for the
    /// default namespace) is bound to, if anything. The last answer is remembered until the
    /// bindings change: most elements of a document use one or two prefixes.
    @inline(__always)
    mutating func lookUpNamespace(_ prefix: UnsafePointer<UInt8>, _ length: Int, _ element: Int32) {
        if cacheGeneration != generation || cacheLength != length || memcmp(prefix, cachePrefix, length) != 0 {
            if length == 0 {
                lua_pushvalue(L, emptyKey)
            } else {
                lua_pushlstring(L, UnsafeRawPointer(prefix).assumingMemoryBound(to: CChar.self), length)
            }
            cacheBound = lua_rawget(L, scope) == LUA_TSTRING
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
    mutating func declareNamespaces(_ element: Int32, _ count: Int) {
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
            lua_rawget(L, scope)
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
            lua_rawset(L, scope)
        }
    }

    /// Undoes the namespace declarations made since `mark`, latest first.
    @inline(__always)
    mutating func restoreNamespaces(_ mark: Int) {
        if undoCount > mark { generation &+= 1 }
        while undoCount > mark {
            undoCount -= 1
            lua_rawgeti(L, undo, lua_Integer(2 * undoCount + 1))
            lua_rawgeti(L, undo, lua_Integer(2 * undoCount + 2))
            lua_rawset(L, scope)
        }
    }
}
