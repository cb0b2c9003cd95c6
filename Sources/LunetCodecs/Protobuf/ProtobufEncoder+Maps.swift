import CLunetLua
import Glibc

// MARK: - Map fields

extension PBEncoder {
    /// A map field: one entry (key = 1, value = 2, both always written) per key, in key order.
    mutating func mapField(_ fi: Int32, _ fd: PBSchema.Field, _ v: Int32) -> Bool {
        let schema = schema.unsafelyUnwrapped
        guard lua_type(L, v) == LUA_TTABLE else {
            return fail { "cannot encode \(describe(v)) as a map (a table expected)" }
        }
        let entry = fd.typeIndex
        let keyField = schema.field(entry, 1)
        let valueField = schema.field(entry, 2)
        let kd = schema.fields[Int(keyField)]
        let vd = schema.fields[Int(valueField)]
        // The keys, checked, then sorted: integers by value, strings by bytes, false < true.
        struct Key { var int: Int64; var bytes: UnsafePointer<UInt8>?; var count: Int }
        var keys: [Key] = []
        lua_pushnil(L)
        while lua_next(L, v) != 0 {
            lua_settop(L, -2)
            let k = lua_gettop(L)
            switch kd.type {
            case FT.string:
                guard lua_type(L, k) == LUA_TSTRING else { return badKey(kd, k) }
                var n = 0
                let s = UnsafeRawPointer(lua_tolstring(L, k, &n)!).assumingMemoryBound(to: UInt8.self)
                keys.append(Key(int: 0, bytes: s, count: n))
            case FT.bool:
                guard lua_type(L, k) == LUA_TBOOLEAN else { return badKey(kd, k) }
                keys.append(Key(int: lua_toboolean(L, k) != 0 ? 1 : 0, bytes: nil, count: 0))
            default:
                guard lua_type(L, k) == LUA_TNUMBER, lua_isinteger(L, k) != 0 else { return badKey(kd, k) }
                pushPath(PBPathEntry.key, Int64(k))
                guard let n = integerValue(kd, k) else { return false }
                popPath()
                keys.append(Key(int: n, bytes: nil, count: 0))
            }
        }
        let unsigned = kd.type == FT.uint64 || kd.type == FT.fixed64
        keys.sort { a, b in
            if let x = a.bytes, let y = b.bytes {
                let c = memcmp(x, y, min(a.count, b.count))
                return c != 0 ? c < 0 : a.count < b.count
            }
            return unsigned ? UInt64(bitPattern: a.int) < UInt64(bitPattern: b.int) : a.int < b.int
        }
        let number = UInt64(fd.number)
        for key in keys {
            if let s = key.bytes {
                lua_pushlstring(L, UnsafeRawPointer(s).assumingMemoryBound(to: CChar.self), key.count)
            } else if kd.type == FT.bool {
                lua_pushboolean(L, Int32(key.int))
            } else {
                lua_pushinteger(L, lua_Integer(key.int))
            }
            let k = lua_gettop(L)
            lua_pushvalue(L, k)
            lua_rawget(L, v)
            pushPath(PBPathEntry.key, Int64(k))
            out.tag(number, PBWire.len)
            let mark = out.beginLength()
            out.tag(1, FT.wire(kd.type))
            var ok = value(kd, k)
            if ok {
                out.tag(2, FT.wire(vd.type))
                ok = value(vd, k + 1)
            }
            lua_settop(L, k - 1)
            guard ok else { return false }
            popPath()
            out.endLength(mark)
        }
        return true
    }

    mutating func badKey(_ kd: PBSchema.Field, _ k: Int32) -> Bool {
        let key = describeKey(k)
        lua_settop(L, k - 1)
        return fail { "cannot encode the key \(key) in a map with \(FT.name(kd.type)) keys" }
    }
}
