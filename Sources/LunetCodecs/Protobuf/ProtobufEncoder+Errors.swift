import CLunetLua

// MARK: - Errors: the first one, with the path where it happened

extension PBEncoder {
    /// Records the first error (the message is only made when it is one, out of line, so
    /// the recursive functions keep small stack frames).
    @inline(never)
    func fail(_ text: () -> String) -> Bool {
        if failure.message == nil { failure.message = "protobuf: \(text()) at \(pathString())" }
        return false
    }

    /// `$.items[2].id` for the current path.
    func pathString() -> String {
        var text = "$"
        let count = pathCount
        for i in 0..<count {
            if count > 40 && i == 20 { text += "…" }
            if count > 40 && i >= 20 && i < count - 10 { continue }
            let e = path.unsafelyUnwrapped[i]
            switch e.kind {
            case PBPathEntry.field:
                text += "." + (schema?.fieldNames[Int(e.value)] ?? "?")
            case PBPathEntry.number, PBPathEntry.index:
                text += "[\(e.value)]"
            default:
                let k = Int32(e.value)
                switch lua_type(L, k) {
                case LUA_TSTRING:
                    var n = 0
                    let s = UnsafeRawPointer(lua_tolstring(L, k, &n)!).assumingMemoryBound(to: UInt8.self)
                    if e.kind == PBPathEntry.name && CodecText.isIdentifier(s, n) {
                        text += "." + String(decoding: UnsafeBufferPointer(start: s, count: n), as: UTF8.self)
                    } else {
                        text += "[" + CodecText.quote(s, n) + "]"
                    }
                case LUA_TNUMBER:
                    text += lua_isinteger(L, k) != 0 ? "[\(lua_tointegerx(L, k, nil))]" : "[\(lua_tonumberx(L, k, nil))]"
                case LUA_TBOOLEAN:
                    text += lua_toboolean(L, k) != 0 ? "[true]" : "[false]"
                default:
                    text += "[" + String(cString: lua_typename(L, lua_type(L, k))) + "]"
                }
            }
        }
        return text
    }

    /// "a string", "an integer", "the float 1.5" for messages.
    func describe(_ i: Int32) -> String {
        switch lua_type(L, i) {
        case LUA_TNUMBER:
            if lua_isinteger(L, i) != 0 { return "the integer \(lua_tointegerx(L, i, nil))" }
            return "the float \(lua_tonumberx(L, i, nil))"
        case LUA_TSTRING: return "a string"
        case LUA_TBOOLEAN: return lua_toboolean(L, i) != 0 ? "true" : "false"
        case LUA_TNIL: return "nil"
        case LUA_TTABLE: return "a table"
        default: return "a " + String(cString: lua_typename(L, lua_type(L, i)))
        }
    }

    /// A key for messages: `'name'`, `5`, or its type.
    func describeKey(_ i: Int32) -> String {
        switch lua_type(L, i) {
        case LUA_TSTRING:
            var n = 0
            let s = UnsafeRawPointer(lua_tolstring(L, i, &n)!).assumingMemoryBound(to: UInt8.self)
            return CodecText.quote(s, n)
        case LUA_TNUMBER:
            return lua_isinteger(L, i) != 0 ? "\(lua_tointegerx(L, i, nil))" : "\(lua_tonumberx(L, i, nil))"
        default:
            return "of type " + String(cString: lua_typename(L, lua_type(L, i)))
        }
    }
}
