import CLunetLua
import LunetCore

// MARK: - Errors

extension JSONEncoderState {

    @inline(never)
    mutating func fail(_ message: String) -> Bool {
        error = LunetError(.argument, message)
        return false
    }

    /// A key that cannot be encoded, at `k`, in the innermost table.
    @inline(never)
    mutating func failKey(_ k: Int32, stringKeysSeen: Bool) -> Bool {
        let at = pathString(depth - 1)
        let type = lua_type(L, k)
        if type == LUA_TSTRING || (type == LUA_TNUMBER && lua_isinteger(L, k) != 0 && lua_tointegerx(L, k, nil) > 0) {
            return fail("cannot encode a table with both string and integer keys at \(at)")
        }
        if type == LUA_TNUMBER {
            var n = 0
            let text = String(cString: lua_tolstring(L, k, &n))    // converts the key in place: the walk ends here
            return fail("cannot encode a table with the key \(text) (object keys must be strings, array keys 1..n) at \(at)")
        }
        let name = String(cString: lua_typename(L, type))
        return fail("cannot encode a table with a \(name) key (object keys must be strings, array keys 1..n) at \(at)")
    }

    /// A string on the stack, quoted for a message.
    func quoted(_ i: Int32) -> String {
        var n = 0
        let s = UnsafeRawPointer(lua_tolstring(L, i, &n)!).assumingMemoryBound(to: UInt8.self)
        return CodecText.quote(s, n)
    }

    /// `$.a.b[2]` for the first `count` path entries (their current keys). Arrays show Lua's
    /// 1-based index; keys that are not identifiers show as `["key"]` (cut at 60 bytes).
    func pathString(_ count: Int) -> String {
        var text = "$"
        let entries = min(count, depth)
        for d in 0..<entries {
            if entries > 40 && d == 20 {
                text += "…"
            }
            if entries > 40 && d >= 20 && d < entries - 10 { continue }
            let e = path.unsafelyUnwrapped[d]
            if let key = e.key {
                if CodecText.isIdentifier(key, e.keyLength) {
                    text += "." + String(decoding: UnsafeBufferPointer(start: key, count: e.keyLength), as: UTF8.self)
                } else {
                    text += "[" + CodecText.quote(key, min(e.keyLength, 60)) + "]"
                }
            } else {
                text += "[\(e.index)]"
            }
        }
        return text
    }
}
