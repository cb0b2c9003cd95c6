import CLunetLua
import Glibc
import LunetLuaStack

// MARK: - Defaults: what absent fields read as (`defaults = true`)

extension PBSchemaDecoder {
    /// The value an absent singular field reads as: its proto2 default, or zero, "", false,
    /// the enum's first value; an empty table for a message.
    func pushDefault(_ fi: Int32) {
        let fd = fields[Int(fi)]
        if let text = schema.fieldDefaults[Int(fi)] {
            switch fd.type {
            case FT.double, FT.float:
                lua_pushnumber(L, Double(text) ?? 0)
                return
            case FT.bool:
                lua_pushboolean(L, text == "true" ? 1 : 0)
                return
            case FT.string:
                LuaStack(L).push(text)
                return
            case FT.bytes:
                let bytes = PBSchemaDecoder.unescape(text)
                bytes.withUnsafeBytes { lunet_pushbytes(L, $0.baseAddress, $0.count) }
                return
            case FT.enum:
                LuaStack(L).push(text)
                return
            case FT.message, FT.group:
                break
            default:
                if let v = Int64(text) {
                    lua_pushinteger(L, lua_Integer(v))
                } else {
                    lua_pushinteger(L, lua_Integer(Int64(bitPattern: UInt64(text) ?? 0)))
                }
                return
            }
        }
        switch fd.type {
        case FT.double, FT.float: lua_pushnumber(L, 0)
        case FT.bool: lua_pushboolean(L, 0)
        case FT.string, FT.bytes: lua_pushlstring(L, "", 0)
        case FT.message, FT.group:
            lua_createtable(L, 0, 0)
            if defaults && fd.type == FT.message { fillDefaults(fd.typeIndex, lua_gettop(L)) }
        case FT.enum:
            let e = schema.enums[Int(fd.typeIndex)]
            if e.defaultNameRef != 0 { lua_rawgeti(L, names, lua_Integer(e.defaultNameRef)) } else { lua_pushinteger(L, 0) }
        default: lua_pushinteger(L, 0)
        }
    }

    /// `defaults`: absent singular scalars outside oneofs get their default; absent repeated
    /// fields and maps an empty table. Messages stay absent.
    func fillDefaults(_ m: Int32, _ t: Int32) {
        let message = schema.messages[Int(m)]
        for fi in message.firstField..<(message.firstField + message.fieldCount) {
            let fd = fields[Int(fi)]
            if fd.oneof >= 0 || (!fd.repeated && (fd.type == FT.message || fd.type == FT.group)) { continue }
            lua_rawgeti(L, names, lua_Integer(fd.nameRef))
            lua_pushvalue(L, -1)
            if lua_rawget(L, t) != LUA_TNIL {
                lua_settop(L, -3)
                continue
            }
            lua_settop(L, -2)
            if fd.repeated { lua_createtable(L, 0, 0) } else { pushDefault(fi) }
            lua_rawset(L, t)
        }
    }

    /// A proto2 `bytes` default as descriptors write it: C escapes (\n, \\, \", \', \ooo, \xHH).
    static func unescape(_ text: String) -> [UInt8] {
        let s = Array(text.utf8)
        var out: [UInt8] = []
        var i = 0
        func octal(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "7") }
        func hexValue(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        while i < s.count {
            guard s[i] == UInt8(ascii: "\\"), i + 1 < s.count else {
                out.append(s[i])
                i += 1
                continue
            }
            let c = s[i + 1]
            i += 2
            switch c {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "a"): out.append(0x07)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "v"): out.append(0x0B)
            case UInt8(ascii: "x"):
                var v: UInt8 = 0
                var k = 0
                while k < 2 && i < s.count, let h = hexValue(s[i]) {
                    v = v &* 16 &+ h
                    i += 1
                    k += 1
                }
                out.append(v)
            case _ where octal(c):
                var v = c - UInt8(ascii: "0")
                var k = 1
                while k < 3 && i < s.count && octal(s[i]) {
                    v = v &* 8 &+ (s[i] - UInt8(ascii: "0"))
                    i += 1
                    k += 1
                }
                out.append(v)
            default: out.append(c)
            }
        }
        return out
    }
}
