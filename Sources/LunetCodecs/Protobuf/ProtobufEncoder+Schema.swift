import CLunetLua
import Glibc

// MARK: - With a schema

extension PBEncoder {
    /// The table at `t` as message `m`: known fields in field number order, then the unknown
    /// fields kept under their numbers. The values of known fields stay on the stack while
    /// the keys are walked, so each is read once.
    mutating func message(_ m: Int32, _ t: Int32) -> Bool {
        guard enter(t) else { return false }
        defer { leave() }
        let schema = schema.unsafelyUnwrapped
        let fields = schema.fields
        lua_rawgeti(L, names, lua_Integer(schema.messages[Int(m)].lookupRef))
        let lookup = lua_gettop(L)
        defer { lua_settop(L, lookup - 1) }
        let mark = scratchCount
        defer { scratchCount = mark }
        var unknownCount = 0
        lua_pushnil(L)
        while lua_next(L, t) != 0 {
            // The key at -2, its value at -1.
            if lua_type(L, -2) == LUA_TSTRING {
                lua_pushvalue(L, -2)
                if lua_rawget(L, lookup) == LUA_TNUMBER {
                    let fi = Int64(lua_tointegerx(L, -1, nil))
                    lua_settop(L, -2)
                    lua_rotate(L, -2, 1)            // the value stays, the key goes on top for lua_next
                    addScratch(fi << 32 | Int64(lua_gettop(L) - 1))
                    guard lua_checkstack(L, 8) != 0 else { return fail { "cannot encode: the Lua stack is full" } }
                    continue
                }
                lua_settop(L, -3)
                pushPath(PBPathEntry.name, Int64(lua_gettop(L)))
                return fail { "unknown field \(describeKey(-1)) in \(schema.messageNames[Int(m)])" }
            }
            lua_settop(L, -2)
            if lua_type(L, -1) == LUA_TNUMBER, lua_isinteger(L, -1) != 0,
               case let k = lua_tointegerx(L, -1, nil), k >= 1 && UInt64(k) <= PBWire.maxFieldNumber {
                addScratch(-Int64(k))
                unknownCount += 1
                continue
            }
            let key = describeKey(-1)
            lua_settop(L, -2)
            return fail { "cannot encode the key \(key) in \(schema.messageNames[Int(m)]) (field names or unknown field numbers expected)" }
        }
        // Unknown fields first (-number, so the largest first), then known ones by field index,
        // which is field number order.
        sortScratch(from: mark)
        let known = mark + unknownCount
        for i in known..<scratchCount {
            let fi = Int32(truncatingIfNeeded: scratch.unsafelyUnwrapped[i] >> 32)
            let fd = fields[Int(fi)]
            guard fd.oneof >= 0 else { continue }
            for j in (i + 1)..<max(i + 1, scratchCount) {
                let other = Int32(truncatingIfNeeded: scratch.unsafelyUnwrapped[j] >> 32)
                if fields[Int(other)].oneof == fd.oneof {
                    return fail { "cannot encode both '\(schema.fieldNames[Int(fi)])' and '\(schema.fieldNames[Int(other)])' of oneof '\(schema.oneofNames[Int(fd.oneof)])' in \(schema.messageNames[Int(m)])" }
                }
            }
        }
        for i in known..<scratchCount {
            let entry = scratch.unsafelyUnwrapped[i]
            let fi = Int32(truncatingIfNeeded: entry >> 32)
            pushPath(PBPathEntry.field, Int64(fi))
            guard field(fi, Int32(truncatingIfNeeded: entry & 0xFFFF_FFFF)) else { return false }
            popPath()
        }
        var i = known - 1
        while i >= mark {
            let number = -scratch.unsafelyUnwrapped[i]
            lua_rawgeti(L, t, lua_Integer(number))
            let ok = rawField(UInt64(number), lua_gettop(L))
            lua_settop(L, -2)
            guard ok else { return false }
            i -= 1
        }
        return true
    }

    /// Field `fi` with the value at `v` (not nil).
    mutating func field(_ fi: Int32, _ v: Int32) -> Bool {
        let fd = schema.unsafelyUnwrapped.fields[Int(fi)]
        let number = UInt64(fd.number)
        if fd.map { return mapField(fi, fd, v) }
        if fd.repeated {
            guard lua_type(L, v) == LUA_TTABLE else {
                return fail { "cannot encode \(describe(v)) as repeated \(typeName(fd)) (a list expected)" }
            }
            let schema = schema.unsafelyUnwrapped
            guard let n = listLength(v, "repeated \(Self.typeName(schema, fd))") else { return false }
            guard n > 0 else { return true }
            if fd.packed {
                out.tag(number, PBWire.len)
                let mark = out.beginLength()
                for i in 1...n {
                    pushPath(PBPathEntry.index, Int64(i))
                    lua_rawgeti(L, v, lua_Integer(i))
                    let ok = value(fd, lua_gettop(L))
                    lua_settop(L, -2)
                    guard ok else { return false }
                    popPath()
                }
                out.endLength(mark)
                return true
            }
            let wire = FT.wire(fd.type)
            for i in 1...n {
                pushPath(PBPathEntry.index, Int64(i))
                lua_rawgeti(L, v, lua_Integer(i))
                out.tag(number, wire)
                let ok = value(fd, lua_gettop(L))
                lua_settop(L, -2)
                guard ok else { return false }
                popPath()
            }
            return true
        }
        if fd.implicitPresence && isZero(fd, v) { return true }
        out.tag(number, FT.wire(fd.type))
        return value(fd, v)
    }

    func typeName(_ fd: PBSchema.Field) -> String { Self.typeName(schema.unsafelyUnwrapped, fd) }

    static func typeName(_ schema: PBSchema, _ fd: PBSchema.Field) -> String {
        switch fd.type {
        case FT.message: return schema.messageNames[Int(fd.typeIndex)]
        case FT.enum: return schema.enumNames[Int(fd.typeIndex)]
        default: return FT.name(fd.type)
        }
    }

    /// Whether the value is its type's zero, which proto3 does not write for fields without
    /// presence (a value of the wrong type is not, so that it still gets its error).
    func isZero(_ fd: PBSchema.Field, _ v: Int32) -> Bool {
        switch lua_type(L, v) {
        case LUA_TNUMBER:
            if fd.type == FT.double || fd.type == FT.float {
                return lua_isinteger(L, v) != 0 ? lua_tointegerx(L, v, nil) == 0 : lua_tonumberx(L, v, nil).bitPattern == 0
            }
            return fd.type != FT.string && fd.type != FT.bytes && fd.type != FT.bool && integer(v) == 0
        case LUA_TBOOLEAN:
            return fd.type == FT.bool && lua_toboolean(L, v) == 0
        case LUA_TSTRING:
            if fd.type == FT.string || fd.type == FT.bytes { return lua_rawlen(L, v) == 0 }
            if fd.type == FT.enum {
                let e = schema.unsafelyUnwrapped.enums[Int(fd.typeIndex)]
                lua_rawgeti(L, names, lua_Integer(e.lookupRef))
                lua_pushvalue(L, v)
                lua_rawget(L, -2)
                let zero = lua_type(L, -1) == LUA_TNUMBER && lua_tointegerx(L, -1, nil) == 0
                lua_settop(L, -3)
                return zero
            }
            return false
        default:
            return false
        }
    }

    /// The value at `v` as field type `fd` (no tag), checked.
    mutating func value(_ fd: PBSchema.Field, _ v: Int32) -> Bool {
        let type = fd.type
        switch type {
        case FT.string, FT.bytes:
            guard lua_type(L, v) == LUA_TSTRING else { return wrongType(fd, v) }
            var n = 0
            let s = lua_tolstring(L, v, &n)!
            if type == FT.string {
                let bad = PBWire.invalidUTF8Offset(UnsafeRawPointer(s).assumingMemoryBound(to: UInt8.self), n)
                if bad >= 0 {
                    let byte = UnsafeRawPointer(s).load(fromByteOffset: bad, as: UInt8.self)
                    return fail { "cannot encode a string that is not valid UTF-8 (byte \(CodecText.hex(byte)) at offset \(bad + 1)) as string (use a bytes field for binary data)" }
                }
            }
            out.bytes(s, n)
        case FT.message:
            guard lua_type(L, v) == LUA_TTABLE else { return wrongType(fd, v) }
            let mark = out.beginLength()
            guard message(fd.typeIndex, v) else { return false }
            out.endLength(mark)
        case FT.bool:
            guard lua_type(L, v) == LUA_TBOOLEAN else { return wrongType(fd, v) }
            out.varint(lua_toboolean(L, v) != 0 ? 1 : 0)
        case FT.double:
            guard lua_type(L, v) == LUA_TNUMBER else { return wrongType(fd, v) }
            out.fixed64(lua_tonumberx(L, v, nil).bitPattern)
        case FT.float:
            guard lua_type(L, v) == LUA_TNUMBER else { return wrongType(fd, v) }
            out.fixed32(Float(lua_tonumberx(L, v, nil)).bitPattern)
        case FT.enum:
            var number: Int64
            if lua_type(L, v) == LUA_TSTRING {
                let e = schema.unsafelyUnwrapped.enums[Int(fd.typeIndex)]
                lua_rawgeti(L, names, lua_Integer(e.lookupRef))
                lua_pushvalue(L, v)
                let found = lua_rawget(L, -2) == LUA_TNUMBER
                number = lua_tointegerx(L, -1, nil)
                lua_settop(L, -3)
                guard found else {
                    return fail { "cannot encode \(describeKey(v)): not a value of \(typeName(fd))" }
                }
            } else {
                guard let n = integer(v) else { return wrongType(fd, v) }
                guard n >= Int64(Int32.min) && n <= Int64(Int32.max) else { return outOfRange(fd, v) }
                number = n
            }
            out.varint(UInt64(bitPattern: number))
        case FT.group:
            return fail { "cannot encode the group field (groups are not supported)" }
        default:
            guard let n = integerValue(fd, v) else { return false }
            switch type {
            case FT.sint32: out.varint(UInt64(PBWire.unzigzag32(Int32(truncatingIfNeeded: n))))
            case FT.sint64: out.varint(PBWire.unzigzag(n))
            case FT.fixed64, FT.sfixed64: out.fixed64(UInt64(bitPattern: n))
            case FT.fixed32, FT.sfixed32: out.fixed32(UInt32(truncatingIfNeeded: n))
            default: out.varint(UInt64(bitPattern: n))     // int32 (sign-extended), int64, uint32, uint64
            }
        }
        return true
    }

    /// An integer field's value, range-checked for its type (64-bit unsigned types take any
    /// Lua integer, negative ones as values from 2^63 up).
    mutating func integerValue(_ fd: PBSchema.Field, _ v: Int32) -> Int64? {
        guard lua_type(L, v) == LUA_TNUMBER else {
            _ = wrongType(fd, v)
            return nil
        }
        var n: Int64
        if lua_isinteger(L, v) != 0 {
            n = lua_tointegerx(L, v, nil)
        } else {
            let d = lua_tonumberx(L, v, nil)
            let unsigned64 = fd.type == FT.uint64 || fd.type == FT.fixed64
            if d == d.rounded(), d >= -9.2233720368547758e18, d < 9.2233720368547758e18 {
                n = Int64(d)
            } else if unsigned64, d == d.rounded(), d >= 0, d < 1.8446744073709552e19 {
                n = Int64(bitPattern: UInt64(d))
            } else {
                _ = fail { "cannot encode \(describe(v)) as \(FT.name(fd.type)) (an integer expected)" }
                return nil
            }
        }
        switch fd.type {
        case FT.int32, FT.sint32, FT.sfixed32:
            guard n >= Int64(Int32.min) && n <= Int64(Int32.max) else {
                _ = outOfRange(fd, v)
                return nil
            }
        case FT.uint32, FT.fixed32:
            guard n >= 0 && n <= Int64(UInt32.max) else {
                _ = outOfRange(fd, v)
                return nil
            }
        default:
            break
        }
        return n
    }

    mutating func wrongType(_ fd: PBSchema.Field, _ v: Int32) -> Bool {
        fail { "cannot encode \(describe(v)) as \(typeName(fd))" }
    }

    mutating func outOfRange(_ fd: PBSchema.Field, _ v: Int32) -> Bool {
        fail { "cannot encode \(describe(v)) as \(FT.name(fd.type)) (out of range)" }
    }
}
