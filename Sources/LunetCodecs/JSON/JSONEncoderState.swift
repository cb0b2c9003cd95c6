import CLunetLua
import Glibc
import LunetCore

// MARK: - The encoder

/// Where the encoder is: for each open table, the table and the key being encoded in it. Used
/// to find cycles and to name the path in errors.
struct JSONPathEntry {
    var table: UnsafeRawPointer?
    var index: lua_Integer = 0
    var key: UnsafePointer<UInt8>? = nil      // a string key (anchored by the table), else `index`
    var keyLength = 0
}

/// A string key of an object being sorted (sort_keys).
struct JSONSortKey {
    var bytes: UnsafePointer<UInt8>
    var count: Int
}

struct JSONEncoderState: TextEncoderState {
    let L: OpaquePointer
    var out = JSONWriter()
    let pretty: Bool
    let sortKeys: Bool
    let nullIndex: Int32
    let arrayMetatableIndex: Int32
    var depth = 0
    var path: UnsafeMutablePointer<JSONPathEntry>? = nil
    var pathCapacity = 0
    var keys: UnsafeMutablePointer<JSONSortKey>? = nil
    var keyCount = 0
    var keyCapacity = 0
    var error: LunetError? = nil

    init(L: OpaquePointer, options: LuaJSONEncoder.Options, nullIndex: Int32, arrayMetatableIndex: Int32) {
        self.L = L
        self.pretty = options.pretty
        self.sortKeys = options.sortKeys
        self.nullIndex = nullIndex
        self.arrayMetatableIndex = arrayMetatableIndex
    }

    mutating func release() {
        free(path)
        free(keys)
        path = nil
        keys = nil
    }

    // MARK: values

    /// Encodes the value at the absolute stack index `i`.
    mutating func value(_ i: Int32) -> Bool {
        switch lua_type(L, i) {
        case LUA_TSTRING:
            var n = 0
            let s = lua_tolstring(L, i, &n)!
            return string(UnsafeRawPointer(s).assumingMemoryBound(to: UInt8.self), n, isKey: false)
        case LUA_TNUMBER:
            if lua_isinteger(L, i) != 0 {
                integer(lua_tointegerx(L, i, nil))
                return true
            }
            return float(lua_tonumberx(L, i, nil))
        case LUA_TTABLE:
            return table(i)
        case LUA_TBOOLEAN:
            if lua_toboolean(L, i) != 0 {
                out.append(UnsafeRawPointer(("true" as StaticString).utf8Start).assumingMemoryBound(to: UInt8.self), 4)
            } else {
                out.append(UnsafeRawPointer(("false" as StaticString).utf8Start).assumingMemoryBound(to: UInt8.self), 5)
            }
            return true
        case LUA_TUSERDATA where lua_rawequal(L, i, nullIndex) != 0, LUA_TNIL:
            // nil only ever comes as the top-level value: a table cannot hold one.
            out.append(UnsafeRawPointer(("null" as StaticString).utf8Start).assumingMemoryBound(to: UInt8.self), 4)
            return true
        case LUA_TNONE:
            return fail("cannot encode: no value given")
        default:
            // function, userdata, thread
            return fail("cannot encode a \(String(cString: lua_typename(L, lua_type(L, i)))) at \(pathString(depth))")
        }
    }

    @inline(__always)
    mutating func integer(_ v: lua_Integer) {
        let o = out.reserve(20)
        var m = v.magnitude
        var sign = 0
        if v < 0 {
            o.pointee = UInt8(ascii: "-")
            sign = 1
        }
        var digits = 1
        var power: UInt64 = 10
        while digits < 20 && m >= power {
            digits += 1
            power &*= 10
        }
        let pairs = UnsafeRawPointer(("00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899" as StaticString).utf8Start).assumingMemoryBound(to: UInt8.self)
        var i = sign + digits
        while m >= 100 {
            let r = Int(m % 100)
            m /= 100
            i -= 2
            o[i] = pairs[2 * r]
            o[i + 1] = pairs[2 * r + 1]
        }
        if m >= 10 {
            o[i - 2] = pairs[2 * Int(m)]
            o[i - 1] = pairs[2 * Int(m) + 1]
        } else {
            o[i - 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: m)
        }
        out.count += sign + digits
    }

    @inline(__always)
    mutating func float(_ v: Double) -> Bool {
        guard v.isFinite else {
            return fail("cannot encode the number \(v.isNaN ? "NaN" : v < 0 ? "-inf" : "inf") (JSON has no NaN or infinity) at \(pathString(depth))")
        }
        // Swift prints a double as the shortest text that reads back as the same value ("0.1",
        // "1.0", "1e+16", "5e-324"): always valid JSON, and a float stays a float when decoded.
        v.write(to: &out)
        return true
    }
}
