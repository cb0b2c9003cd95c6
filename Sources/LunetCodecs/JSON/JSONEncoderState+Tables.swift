import CLunetLua
import Glibc

// MARK: - Tables

extension JSONEncoderState {


    mutating func table(_ t: Int32) -> Bool {
        let pointer = lua_topointer(L, t)
        for d in 0..<depth where path.unsafelyUnwrapped[d].table == pointer {
            return fail("cannot encode a table that contains itself (a reference cycle) at \(pathString(depth))")
        }
        guard depth < LuaJSONEncoder.maxDepth else {
            return fail("cannot encode: nesting deeper than \(LuaJSONEncoder.maxDepth) levels at \(pathString(depth))")
        }
        guard lua_checkstack(L, 6) != 0 else {
            return fail("cannot encode: the Lua stack is full at \(pathString(depth))")
        }
        if depth == pathCapacity { growStorage(&path, &pathCapacity, minimum: 16, "the JSON codec") }
        path.unsafelyUnwrapped[depth] = JSONPathEntry(table: pointer)
        depth += 1
        defer { depth -= 1 }

        var marked = false
        if lua_getmetatable(L, t) != 0 {
            marked = lua_rawequal(L, -1, arrayMetatableIndex) != 0
            lua_settop(L, -2)
        }
        lua_pushnil(L)
        guard lua_next(L, t) != 0 else {
            out.append(marked ? UInt8(ascii: "[") : UInt8(ascii: "{"))
            out.append(marked ? UInt8(ascii: "]") : UInt8(ascii: "}"))
            return true
        }
        // The first key is at -2, its value at -1.
        if lua_type(L, -2) == LUA_TSTRING {
            if marked {
                return fail("cannot encode the string key \(quoted(-2)) in a json.array table at \(pathString(depth - 1))")
            }
            return sortKeys ? sortedObject(t) : object(t)
        }
        return array(t)
    }

    /// The key or index being encoded in the innermost table. (`path` may move when a nested
    /// table grows it, so it is never held across a nested value.)
    @inline(__always)
    mutating func setKey(_ k: UnsafePointer<UInt8>, _ n: Int) {
        let entry = path.unsafelyUnwrapped + (depth - 1)
        entry.pointee.key = k
        entry.pointee.keyLength = n
    }

    @inline(__always)
    mutating func setIndex(_ i: lua_Integer) {
        path.unsafelyUnwrapped[depth - 1].index = i
    }

    /// `"key": value` pairs in `next` order. Called with the first pair on the stack.
    mutating func object(_ t: Int32) -> Bool {
        out.append(UInt8(ascii: "{"))
        var first = true
        repeat {
            guard lua_type(L, -2) == LUA_TSTRING else { return failKey(-2, stringKeysSeen: true) }
            var n = 0
            let k = UnsafeRawPointer(lua_tolstring(L, -2, &n)!).assumingMemoryBound(to: UInt8.self)
            setKey(k, n)
            guard member(k, n, first: first, valueAt: lua_gettop(L)) else { return false }
            first = false
            lua_settop(L, -2)
        } while lua_next(L, t) != 0
        if pretty { out.newline(indent: depth - 1) }
        out.append(UInt8(ascii: "}"))
        return true
    }

    @inline(__always)
    mutating func member(_ k: UnsafePointer<UInt8>, _ n: Int, first: Bool, valueAt v: Int32) -> Bool {
        if !first { out.append(UInt8(ascii: ",")) }
        if pretty { out.newline(indent: depth) }
        guard string(k, n, isKey: true) else { return false }
        if pretty {
            let o = out.reserve(2)
            o[0] = UInt8(ascii: ":")
            o[1] = UInt8(ascii: " ")
            out.count += 2
        } else {
            out.append(UInt8(ascii: ":"))
        }
        return value(v)
    }

    /// The same with the keys in byte order (sort_keys). Called with the first pair on the stack.
    mutating func sortedObject(_ t: Int32) -> Bool {
        let first = keyCount
        repeat {
            guard lua_type(L, -2) == LUA_TSTRING else { return failKey(-2, stringKeysSeen: true) }
            var n = 0
            let k = UnsafeRawPointer(lua_tolstring(L, -2, &n)!).assumingMemoryBound(to: UInt8.self)
            if keyCount == keyCapacity { growStorage(&keys, &keyCapacity, minimum: 64, "the JSON codec") }
            keys.unsafelyUnwrapped[keyCount] = JSONSortKey(bytes: k, count: n)
            keyCount += 1
            lua_settop(L, -2)
        } while lua_next(L, t) != 0
        defer { keyCount = first }
        var sorting = UnsafeMutableBufferPointer(start: keys.unsafelyUnwrapped + first, count: keyCount - first)
        sorting.sort { a, b in
            let c = memcmp(a.bytes, b.bytes, min(a.count, b.count))
            return c != 0 ? c < 0 : a.count < b.count
        }
        out.append(UInt8(ascii: "{"))
        for j in first..<keyCount {
            // Nested tables may grow (move) `keys`: read through the pointer each time.
            let key = keys.unsafelyUnwrapped[j]
            setKey(key.bytes, key.count)
            lua_pushlstring(L, UnsafeRawPointer(key.bytes).assumingMemoryBound(to: CChar.self), key.count)
            lua_rawget(L, t)
            guard member(key.bytes, key.count, first: j == first, valueAt: lua_gettop(L)) else { return false }
            lua_settop(L, -2)
        }
        if pretty { out.newline(indent: depth - 1) }
        out.append(UInt8(ascii: "}"))
        return true
    }

    /// Elements 1..n. Called with the first pair on the stack. The usual case, keys met in
    /// order 1, 2, 3... by `next`, is encoded in that one pass. When `next` gives them in
    /// another order, the rest of the keys are checked (positive integers, as many as the
    /// largest, so exactly 1..n) and the remaining elements read by index.
    mutating func array(_ t: Int32) -> Bool {
        out.append(UInt8(ascii: "["))
        var expected: lua_Integer = 1
        var isInteger: Int32 = 0
        while true {
            // A number key converts to an integer exactly when it is one: Lua stores a float key
            // with an integral value as that integer. (The type check keeps out strings, which
            // lua_tointegerx would convert.)
            if lua_type(L, -2) == LUA_TNUMBER && lua_tointegerx(L, -2, &isInteger) == expected && isInteger != 0 {
                setIndex(expected)
                guard element(first: expected == 1, valueAt: lua_gettop(L)) else { return false }
                expected += 1
                lua_settop(L, -2)
                if lua_next(L, t) == 0 { break }
                continue
            }
            // Out of order (or not an index at all): check the remaining keys.
            lua_settop(L, -2)
            var count = expected - 1
            var largest = expected - 1
            repeat {
                guard lua_type(L, -1) == LUA_TNUMBER && lua_isinteger(L, -1) != 0 && lua_tointegerx(L, -1, nil) > 0 else {
                    return failKey(-1, stringKeysSeen: false)
                }
                count += 1
                largest = max(largest, lua_tointegerx(L, -1, nil))
                if lua_next(L, t) == 0 { break }
                lua_settop(L, -2)
            } while true
            guard count == largest else {
                return fail("cannot encode a sparse array (integer keys with holes: \(count) keys, the largest \(largest)) at \(pathString(depth - 1))")
            }
            while expected <= largest {
                setIndex(expected)
                lua_rawgeti(L, t, expected)
                guard element(first: expected == 1, valueAt: lua_gettop(L)) else { return false }
                lua_settop(L, -2)
                expected += 1
            }
            break
        }
        if pretty { out.newline(indent: depth - 1) }
        out.append(UInt8(ascii: "]"))
        return true
    }

    @inline(__always)
    mutating func element(first: Bool, valueAt v: Int32) -> Bool {
        if !first { out.append(UInt8(ascii: ",")) }
        if pretty { out.newline(indent: depth) }
        return value(v)
    }
}
