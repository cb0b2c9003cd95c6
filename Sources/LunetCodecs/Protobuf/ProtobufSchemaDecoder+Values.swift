import CLunetLua
import Glibc

// MARK: - Values: scalars by declared type, lists, oneofs, packed runs, unknown fields

extension PBSchemaDecoder {
    @inline(__always)
    func pushVarint(_ fd: PBSchema.Field, _ v: UInt64) {
        switch fd.type {
        case FT.int32: lua_pushinteger(L, lua_Integer(Int32(truncatingIfNeeded: v)))
        case FT.uint32: lua_pushinteger(L, lua_Integer(UInt32(truncatingIfNeeded: v)))
        case FT.sint32: lua_pushinteger(L, lua_Integer(PBWire.zigzag32(UInt32(truncatingIfNeeded: v))))
        case FT.sint64: lua_pushinteger(L, lua_Integer(PBWire.zigzag(v)))
        case FT.bool: lua_pushboolean(L, v != 0 ? 1 : 0)
        case FT.enum:
            let number = Int32(truncatingIfNeeded: v)
            let ref = schema.enumName(fd.typeIndex, number)
            if ref != 0 { lua_rawgeti(L, names, lua_Integer(ref)) } else { lua_pushinteger(L, lua_Integer(number)) }
        default: lua_pushinteger(L, lua_Integer(Int64(bitPattern: v)))   // int64, uint64
        }
    }

    @inline(__always)
    func pushFixed64(_ type: UInt8, _ v: UInt64) {
        if type == FT.double {
            lua_pushnumber(L, Double(bitPattern: v))
        } else {
            lua_pushinteger(L, lua_Integer(Int64(bitPattern: v)))
        }
    }

    @inline(__always)
    func pushFixed32(_ type: UInt8, _ v: UInt32) {
        switch type {
        case FT.float: lua_pushnumber(L, Double(Float(bitPattern: v)))
        case FT.sfixed32: lua_pushinteger(L, lua_Integer(Int32(bitPattern: v)))
        default: lua_pushinteger(L, lua_Integer(v))
        }
    }

    /// Stores the value on top of the stack (popping it) into field `fi` of the table at `t`.
    @inline(__always)
    func store(_ t: Int32, _ fi: Int32, _ fd: PBSchema.Field) {
        if fd.repeated {
            pushList(t, fd)
            lua_rotate(L, -2, 1)
            lua_rawseti(L, -2, lua_Integer(lua_rawlen(L, -2)) + 1)
            lua_settop(L, -2)
            return
        }
        if fd.oneof >= 0 { clearOneof(t, fi, fd) }
        lua_rawgeti(L, names, lua_Integer(fd.nameRef))
        lua_rotate(L, -2, 1)
        lua_rawset(L, t)
    }

    /// Pushes the list (or map) of field `fd` in the table at `t`, making it on first use.
    @inline(__always)
    func pushList(_ t: Int32, _ fd: PBSchema.Field, size: Int32 = 0) {
        lua_rawgeti(L, names, lua_Integer(fd.nameRef))
        lua_pushvalue(L, -1)
        if lua_rawget(L, t) == LUA_TTABLE {
            lua_rotate(L, -2, 1)
            lua_settop(L, -2)
            return
        }
        lua_settop(L, -2)
        lua_createtable(L, size, 0)
        lua_pushvalue(L, -1)
        lua_rotate(L, -3, 1)
        lua_rawset(L, t)
    }

    /// A oneof member is being set: the other members go.
    @inline(never)
    func clearOneof(_ t: Int32, _ fi: Int32, _ fd: PBSchema.Field) {
        let message = schema.messages[Int(fd.message)]
        for other in message.firstField..<(message.firstField + message.fieldCount) where other != fi && fields[Int(other)].oneof == fd.oneof {
            lua_rawgeti(L, names, lua_Integer(fields[Int(other)].nameRef))
            lua_pushnil(L)
            lua_rawset(L, t)
        }
    }

    /// A packed run of a repeated scalar field: a length, then the values back to back.
    mutating func packed(_ t: Int32, _ fi: Int32, _ number: UInt64, _ end: UnsafePointer<UInt8>) -> Bool {
        let fd = fields[Int(fi)]
        let schema = self.schema
        var n = 0
        guard cursor.readLength(end, number, &n) else { return false }
        let stop = p + n
        // A new list gets its size at once: every varint ends in one byte below 0x80.
        var count = 0
        switch FT.wire(fd.type) {
        case PBWire.fixed64: count = n / 8
        case PBWire.fixed32: count = n / 4
        default:
            for i in 0..<n where p[i] < 0x80 { count += 1 }
        }
        pushList(t, fd, size: Int32(clamping: count))
        let list = lua_gettop(L)
        var k = lua_Integer(lua_rawlen(L, list))
        switch FT.wire(fd.type) {
        case PBWire.varint:
            while p < stop {
                var v: UInt64 = 0
                guard cursor.readVarint(stop, "packed field \(schema.fieldPath(fi))", &v) else { return false }
                pushVarint(fd, v)
                k += 1
                lua_rawseti(L, list, k)
            }
        case PBWire.fixed64:
            guard n % 8 == 0 else { return cursor.fail(.truncatedFixed(8, "packed field \(schema.fieldPath(fi))"), at: p + (n - n % 8)) }
            while p < stop {
                pushFixed64(fd.type, PBWire.loadFixed64(p))
                p += 8
                k += 1
                lua_rawseti(L, list, k)
            }
        default:
            guard n % 4 == 0 else { return cursor.fail(.truncatedFixed(4, "packed field \(schema.fieldPath(fi))"), at: p + (n - n % 4)) }
            while p < stop {
                pushFixed32(fd.type, PBWire.loadFixed32(p))
                p += 4
                k += 1
                lua_rawseti(L, list, k)
            }
        }
        lua_settop(L, list - 1)
        return true
    }

    /// A field that is not in the schema (or came with another wire type than its type's):
    /// read, then kept under its number as `protobuf.decode` would, or dropped.
    mutating func unknown(_ t: Int32, _ number: UInt64, _ wire: UInt8,
                          _ tagAt: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Bool {
        switch wire {
        case PBWire.varint:
            var v: UInt64 = 0
            guard cursor.readVarint(end, "field \(number)", &v) else { return false }
            lua_pushinteger(L, lua_Integer(Int64(bitPattern: v)))
        case PBWire.fixed64:
            guard end - p >= 8 else { return cursor.fail(.truncatedFixed(8, "field \(number)"), at: p) }
            lua_pushinteger(L, lua_Integer(Int64(bitPattern: PBWire.loadFixed64(p))))
            p += 8
        case PBWire.fixed32:
            guard end - p >= 4 else { return cursor.fail(.truncatedFixed(4, "field \(number)"), at: p) }
            lua_pushinteger(L, lua_Integer(PBWire.loadFixed32(p)))
            p += 4
        case PBWire.len:
            var n = 0
            guard cursor.readLength(end, number, &n) else { return false }
            lua_pushlstring(L, UnsafeRawPointer(p).assumingMemoryBound(to: CChar.self), n)
            p += n
        case PBWire.startGroup:
            return cursor.fail(.group(number), at: tagAt)
        case PBWire.endGroup:
            return cursor.fail(.endGroup(number), at: tagAt)
        default:
            return cursor.fail(.invalidWireType(wire, number), at: tagAt)
        }
        guard keepUnknown else {
            lua_settop(L, -2)
            return true
        }
        if lua_rawgeti(L, t, lua_Integer(number)) != LUA_TTABLE {
            lua_settop(L, -2)
            lua_createtable(L, 1, 0)
            lua_pushvalue(L, -1)
            lua_rawseti(L, t, lua_Integer(number))
        }
        lua_rotate(L, -2, 1)
        let list = lua_gettop(L) - 1
        let key = UInt(bitPattern: lua_topointer(L, list))
        let count = lua_Integer(lua_rawlen(L, list))
        var state = PBIntWire.none
        if let kept = states[key], kept.count == count { state = kept.state }
        pbAppendOccurrence(L, list: list, wire: wire, state: &state)
        states[key] = (state, count + 1)
        lua_settop(L, -2)
        return true
    }
}
