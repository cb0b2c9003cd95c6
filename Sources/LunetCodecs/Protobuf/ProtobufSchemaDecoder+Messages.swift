import CLunetLua
import Glibc

// MARK: - Nested messages and map entries

extension PBSchemaDecoder {
    /// Opens the nested message of field `fi`, `n` bytes from p.
    mutating func open(_ t: Int32, _ fi: Int32, _ fd: PBSchema.Field, _ n: Int, _ tagAt: UnsafePointer<UInt8>) -> Bool {
        guard depth < maxDepth else { return cursor.fail(.tooDeep(maxDepth), at: tagAt) }
        guard lua_checkstack(L, 12) != 0 else { return cursor.fail(.luaStackFull, at: tagAt) }
        if depth + 1 == frameCapacity { growFrames() }
        let kind: UInt8
        if fd.repeated {
            pushList(t, fd)
            lua_createtable(L, 0, 4)
            kind = fd.map ? Self.mapEntry : Self.element
        } else {
            if fd.oneof >= 0 { clearOneof(t, fi, fd) }
            // A message that occurs again is merged into the first.
            lua_rawgeti(L, names, lua_Integer(fd.nameRef))
            lua_pushvalue(L, -1)
            if lua_rawget(L, t) == LUA_TTABLE {
                lua_rotate(L, -2, 1)
                lua_settop(L, -2)
            } else {
                lua_settop(L, -2)
                lua_createtable(L, 0, 4)
                lua_pushvalue(L, -1)
                lua_rotate(L, -3, 1)
                lua_rawset(L, t)
            }
            kind = Self.singular
        }
        depth += 1
        frames.unsafelyUnwrapped[depth] = Frame(message: fd.typeIndex, end: p + n, table: lua_gettop(L), kind: kind)
        return true
    }

    /// At the end of the innermost message. Returns false when it was the top-level one.
    mutating func close() -> Bool {
        let frame = frames.unsafelyUnwrapped[depth]
        let t = frame.table
        if defaults { fillDefaults(frame.message, t) }
        switch frame.kind {
        case Self.root:
            lua_settop(L, t)
            return false
        case Self.singular:
            lua_settop(L, t - 1)
        case Self.element:
            lua_settop(L, t)
            lua_rawseti(L, t - 1, lua_Integer(lua_rawlen(L, t - 1)) + 1)
            lua_settop(L, t - 2)
        default:
            // A map entry: map[key] = value, with the type's default for a missing part.
            lua_settop(L, t)
            pushEntryPart(frame.message, t, 1)
            pushEntryPart(frame.message, t, 2)
            lua_rawset(L, t - 1)
            lua_settop(L, t - 2)
        }
        depth -= 1
        return true
    }

    func pushEntryPart(_ m: Int32, _ t: Int32, _ number: UInt64) {
        let fi = schema.field(m, number)
        guard fi >= 0 else {
            lua_pushboolean(L, 0)
            return
        }
        lua_rawgeti(L, names, lua_Integer(fields[Int(fi)].nameRef))
        if lua_rawget(L, t) == LUA_TNIL {
            lua_settop(L, -2)
            pushDefault(fi)
        }
    }
}
