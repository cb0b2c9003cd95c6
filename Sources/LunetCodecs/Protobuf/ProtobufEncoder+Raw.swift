import CLunetLua
import Glibc
import LunetLuaStack

// MARK: - Without a schema

extension PBEncoder {
    /// The message table at `t`: keys are field numbers, written in ascending order.
    mutating func rawMessage(_ t: Int32) -> Bool {
        guard enter(t) else { return false }
        defer { leave() }
        let mark = scratchCount
        defer { scratchCount = mark }
        lua_pushnil(L)
        while lua_next(L, t) != 0 {
            lua_settop(L, -2)
            guard lua_type(L, -1) == LUA_TNUMBER, lua_isinteger(L, -1) != 0,
                  case let k = lua_tointegerx(L, -1, nil), k >= 1 && UInt64(k) <= PBWire.maxFieldNumber else {
                let key = describeKey(-1)
                lua_settop(L, -2)
                return fail { "cannot encode the key \(key): message tables are keyed by field number (an integer from 1 to 536870911)" }
            }
            addScratch(Int64(k))
        }
        sortScratch(from: mark)
        for i in mark..<scratchCount {
            let number = scratch.unsafelyUnwrapped[i]
            lua_rawgeti(L, t, lua_Integer(number))
            let ok = rawField(UInt64(number), lua_gettop(L))
            lua_settop(L, -2)
            guard ok else { return false }
        }
        return true
    }

    static let unspecified: UInt8 = 0xFF

    /// One field: a list of occurrences (with an optional `wire` marker), or a single value.
    mutating func rawField(_ number: UInt64, _ v: Int32) -> Bool {
        pushPath(PBPathEntry.number, Int64(number))
        defer { popPath() }
        guard lua_type(L, v) == LUA_TTABLE else { return occurrence(number, v, Self.unspecified) }
        guard let n = listLength(v, allowing: "wire", "the occurrences of a field") else { return false }
        var wire = Self.unspecified
        let wireType = lunet_rawgetfield(L, v, "wire")
        let wires = lua_gettop(L)
        defer { lua_settop(L, wires - 1) }
        switch wireType {
        case LUA_TNIL: break
        case LUA_TSTRING:
            guard let w = wireCode(wires) else { return false }
            wire = w
        case LUA_TTABLE: break
        default:
            return fail { "cannot encode 'wire' = \(describe(wires)) (a wire type name or a list of them expected)" }
        }
        for i in 1..<(n + 1) {
            pushPath(PBPathEntry.index, Int64(i))
            if wireType == LUA_TTABLE {
                lua_rawgeti(L, wires, lua_Integer(i))
                guard lua_type(L, -1) == LUA_TSTRING, let w = wireCode(lua_gettop(L)) else {
                    return fail { "cannot encode 'wire'[\(i)] = \(describe(-1)) (a wire type name expected)" }
                }
                wire = w
                lua_settop(L, -2)
            }
            lua_rawgeti(L, v, lua_Integer(i))
            let ok = occurrence(number, lua_gettop(L), wire, forNumbersOnly: wireType == LUA_TSTRING)
            lua_settop(L, -2)
            guard ok else { return false }
            popPath()
        }
        return true
    }

    mutating func wireCode(_ i: Int32) -> UInt8? {
        switch LuaStack(L).string(i) {
        case "varint": return PBWire.varint
        case "fixed64": return PBWire.fixed64
        case "fixed32": return PBWire.fixed32
        case "len": return PBWire.len
        default:
            _ = fail { "cannot encode 'wire' = \(describeKey(i)) (expected \"varint\", \"fixed64\", \"fixed32\" or \"len\")" }
            return nil
        }
    }

    /// One occurrence, tag included. A list's `wire` string only says how its numbers are
    /// written (`forNumbersOnly`): its strings and tables are length-delimited whatever it says.
    mutating func occurrence(_ number: UInt64, _ v: Int32, _ wire: UInt8, forNumbersOnly: Bool = false) -> Bool {
        switch lua_type(L, v) {
        case LUA_TSTRING:
            guard wire == Self.unspecified || wire == PBWire.len || forNumbersOnly else {
                return fail { "cannot encode a string with wire type \(PBWire.name(wire))" }
            }
            var n = 0
            let s = lua_tolstring(L, v, &n)
            out.tag(number, PBWire.len)
            out.bytes(s, n)
        case LUA_TTABLE:
            guard wire == Self.unspecified || wire == PBWire.len || forNumbersOnly else {
                return fail { "cannot encode a table (a nested message) with wire type \(PBWire.name(wire))" }
            }
            out.tag(number, PBWire.len)
            let mark = out.beginLength()
            guard rawMessage(v) else { return false }
            out.endLength(mark)
        case LUA_TNUMBER, LUA_TBOOLEAN:
            let isFloat = lua_type(L, v) == LUA_TNUMBER && lua_isinteger(L, v) == 0
            let bits: Int64 = lua_type(L, v) == LUA_TBOOLEAN ? (lua_toboolean(L, v) != 0 ? 1 : 0) : lua_tointegerx(L, v, nil)
            switch wire {
            case PBWire.fixed64:
                out.tag(number, PBWire.fixed64)
                out.fixed64(isFloat ? lua_tonumberx(L, v, nil).bitPattern : UInt64(bitPattern: bits))
            case PBWire.fixed32:
                if isFloat {
                    out.tag(number, PBWire.fixed32)
                    out.fixed32(Float(lua_tonumberx(L, v, nil)).bitPattern)
                } else {
                    guard bits >= Int64(Int32.min) && bits <= Int64(UInt32.max) else {
                        return fail { "cannot encode \(describe(v)) as fixed32 (out of range)" }
                    }
                    out.tag(number, PBWire.fixed32)
                    out.fixed32(UInt32(truncatingIfNeeded: bits))
                }
            case PBWire.len:
                return fail { "cannot encode \(describe(v)) with wire type len" }
            default:
                guard let value = isFloat ? integer(v) : bits else {
                    return fail { "cannot encode \(describe(v)) as a varint (a float needs wire = \"fixed64\" or \"fixed32\")" }
                }
                out.tag(number, PBWire.varint)
                out.varint(UInt64(bitPattern: value))
            }
        default:
            return fail { "cannot encode \(describe(v))" }
        }
        return true
    }
}
