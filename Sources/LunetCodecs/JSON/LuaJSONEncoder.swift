import CLunet
import Glibc
import LunetCore

/// Lua values encoded straight into JSON bytes: no Swift value tree, no Swift string per value.
///
/// The rules (docs/json.md has them with examples):
/// - string → JSON string: `"` `\` and control characters escaped (`\n` `\r` `\t` `\b` `\f`,
///   the others as `\u00XX`), "/" and non-ASCII UTF-8 passed through; invalid UTF-8 → error;
/// - integer → its digits; float → the shortest text that reads back as the same double
///   (`0.1`, `1.0`, `1e+16`), so integers and floats keep their Lua subtype through a round
///   trip; NaN and ±infinity → error; boolean → true/false; `json.null` → null;
/// - a table with the `json.array` metatable → array (`[]` when empty); a table whose keys are
///   exactly 1..n → array; an empty plain table → `{}`; a table with string keys → object;
///   string and integer keys together → error ("both string and integer keys"); positive
///   integer keys with holes → error ("sparse array"); any other key (0, negative, 1.5, a
///   boolean...) → error; other metatables are ignored (tables are read raw);
/// - functions, userdata (but `json.null`), threads → error; a table that contains itself, or
///   nesting deeper than 1000 levels → error. Errors name the path: `$.a.b[2]`.
/// - options: `pretty` (two-space indent, ": ", a newline per element), `sortKeys` (object keys
///   in byte order; otherwise in `next` order).
///
/// Never raises: raw table access, lua_next, pushes and lua_checkstack only.
public enum LuaJSONEncoder {
    public struct Options: Sendable {
        public var pretty = false
        public var sortKeys = false
        public init() {}
    }

    public static let maxDepth = 1000

    /// Appends the JSON text of the value at `index` to `out`, or returns an `argument` error
    /// (and leaves `out` as it was). The Lua stack is left as it was.
    public static func encode(_ L: OpaquePointer, index: Int32, options: Options, into out: ByteBuffer) -> LunetError? {
        var writer = JSONWriter()
        defer { writer.release() }
        if let error = encode(L, index: index, options: options, writer: &writer) { return error }
        if writer.count > 0 { out.append(writer.base!, writer.count) }
        return nil
    }

    /// Appends to the codec's own growable buffer (json.encode pushes it as a string from
    /// there); on failure the buffer is as it was.
    static func encode(_ L: OpaquePointer, index: Int32, options: Options, writer: inout JSONWriter) -> LunetError? {
        let top = lua_gettop(L)
        let mark = writer.count
        let value = lua_absindex(L, index)
        guard lua_checkstack(L, 8) != 0 else { return LunetError(.argument, "cannot encode: the Lua stack is full") }
        JSONRegistry.pushNull(L)
        JSONRegistry.pushArrayMetatable(L)
        var encoder = JSONEncoderState(L: L, options: options, nullIndex: top + 1, arrayMetatableIndex: top + 2)
        encoder.out = writer
        let ok = encoder.value(value)
        writer = encoder.out
        let error = encoder.error
        encoder.release()
        lua_settop(L, top)
        if !ok {
            writer.count = mark
            return error ?? LunetError(.argument, "cannot encode the value")
        }
        return nil
    }
}

// MARK: - Output

/// The JSON encoder writes into the shared codec buffer.
typealias JSONWriter = ByteWriter

/// Where Double.write(to:) puts its digits. The standard library hands a finite double's text
/// to `_writeASCII` as bytes, with no String made; `write(_:)` is the general fallback.
extension JSONWriter: TextOutputStream {
    mutating func write(_ string: String) {
        var text = string
        text.withUTF8 { append($0.baseAddress!, $0.count) }
    }

    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        append(buffer.baseAddress!, buffer.count)
    }
}

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

struct JSONEncoderState {
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

    // MARK: strings

    /// Writes `"…"`. Invariant: the room left at `o` is at least the input left plus 9 (eight
    /// bytes of a word store and the closing quote); an escape makes room again.
    mutating func string(_ s: UnsafePointer<UInt8>, _ n: Int, isKey: Bool) -> Bool {
        var o = out.reserve(n + 10)
        o.pointee = UInt8(ascii: "\"")
        o += 1
        var i = 0
        while i < n {
            if n - i >= 8 {
                // Copy eight bytes; keep those before the first special one.
                let w = UnsafeRawPointer(s + i).loadUnaligned(as: UInt64.self)
                UnsafeMutableRawPointer(o).storeBytes(of: w, as: UInt64.self)
                let special = JSONScan.specialBytes(UInt64(littleEndian: w))
                if special == 0 {
                    o += 8
                    i += 8
                    continue
                }
                let plain = special.trailingZeroBitCount >> 3
                o += plain
                i += plain
            }
            let c = s[i]
            if c >= 0x80 {
                let k = Self.utf8SequenceLength(s + i, n - i)
                guard k > 0 else { return failUTF8(s, n, at: i, isKey: isKey) }
                for j in 0..<k { o[j] = s[i + j] }
                o += k
                i += k
                continue
            }
            if c >= 0x20 && c != UInt8(ascii: "\"") && c != UInt8(ascii: "\\") {
                o.pointee = c
                o += 1
                i += 1
                continue
            }
            // An escape: up to six bytes for one.
            out.count = o - out.base.unsafelyUnwrapped
            o = out.reserve(n - i + 6 + 9)
            o[0] = UInt8(ascii: "\\")
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): o[1] = c; o += 2
            case 0x0A: o[1] = UInt8(ascii: "n"); o += 2
            case 0x0D: o[1] = UInt8(ascii: "r"); o += 2
            case 0x09: o[1] = UInt8(ascii: "t"); o += 2
            case 0x08: o[1] = UInt8(ascii: "b"); o += 2
            case 0x0C: o[1] = UInt8(ascii: "f"); o += 2
            default:
                let hex = UnsafeRawPointer(("0123456789abcdef" as StaticString).utf8Start).assumingMemoryBound(to: UInt8.self)
                o[1] = UInt8(ascii: "u")
                o[2] = UInt8(ascii: "0")
                o[3] = UInt8(ascii: "0")
                o[4] = hex[Int(c >> 4)]
                o[5] = hex[Int(c & 15)]
                o += 6
            }
            i += 1
        }
        o.pointee = UInt8(ascii: "\"")
        o += 1
        out.count = o - out.base.unsafelyUnwrapped
        return true
    }

    /// The length of the well-formed UTF-8 sequence at `p` (RFC 3629), or 0.
    @inline(__always)
    static func utf8SequenceLength(_ p: UnsafePointer<UInt8>, _ left: Int) -> Int {
        let c = p[0]
        switch c {
        case 0xC2...0xDF:
            return left >= 2 && p[1] & 0xC0 == 0x80 ? 2 : 0
        case 0xE0...0xEF:
            guard left >= 3 else { return 0 }
            let lo: UInt8 = c == 0xE0 ? 0xA0 : 0x80
            let hi: UInt8 = c == 0xED ? 0x9F : 0xBF
            return p[1] >= lo && p[1] <= hi && p[2] & 0xC0 == 0x80 ? 3 : 0
        case 0xF0...0xF4:
            guard left >= 4 else { return 0 }
            let lo: UInt8 = c == 0xF0 ? 0x90 : 0x80
            let hi: UInt8 = c == 0xF4 ? 0x8F : 0xBF
            return p[1] >= lo && p[1] <= hi && p[2] & 0xC0 == 0x80 && p[3] & 0xC0 == 0x80 ? 4 : 0
        default:
            return 0
        }
    }

    @inline(never)
    mutating func failUTF8(_ s: UnsafePointer<UInt8>, _ n: Int, at i: Int, isKey: Bool) -> Bool {
        let what = isKey ? "a key" : "a string"
        return fail("cannot encode \(what) that is not valid UTF-8 (byte \(Self.hex(s[i])) at offset \(i + 1)) at \(pathString(depth))")
    }

    static func hex(_ c: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x" + String(digits[Int(c >> 4)]) + String(digits[Int(c & 15)])
    }

    // MARK: tables

    @inline(__always)
    mutating func newline(_ level: Int) {
        let o = out.reserve(1 + 2 * level)
        o.pointee = 0x0A
        (o + 1).initialize(repeating: 0x20, count: 2 * level)
        out.count += 1 + 2 * level
    }

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
        if depth == pathCapacity { growPath() }
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

    @inline(never)
    mutating func growPath() {
        let capacity = max(16, pathCapacity * 2)
        guard let grown = realloc(path, capacity * MemoryLayout<JSONPathEntry>.stride) else { jsonCodecOutOfMemory() }
        path = grown.assumingMemoryBound(to: JSONPathEntry.self)
        pathCapacity = capacity
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
        if pretty { newline(depth - 1) }
        out.append(UInt8(ascii: "}"))
        return true
    }

    @inline(__always)
    mutating func member(_ k: UnsafePointer<UInt8>, _ n: Int, first: Bool, valueAt v: Int32) -> Bool {
        if !first { out.append(UInt8(ascii: ",")) }
        if pretty { newline(depth) }
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
            if keyCount == keyCapacity { growKeys() }
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
        if pretty { newline(depth - 1) }
        out.append(UInt8(ascii: "}"))
        return true
    }

    @inline(never)
    mutating func growKeys() {
        let capacity = max(64, keyCapacity * 2)
        guard let grown = realloc(keys, capacity * MemoryLayout<JSONSortKey>.stride) else { jsonCodecOutOfMemory() }
        keys = grown.assumingMemoryBound(to: JSONSortKey.self)
        keyCapacity = capacity
    }

    /// Elements 1..n. Called with the first pair on the stack. The usual case, keys met in
    /// order 1, 2, 3... by `next`, is encoded in that one pass. When `next` gives them in
    /// another order, the rest of the keys are checked (positive integers, as many as the
    /// largest, so exactly 1..n) and the remaining elements read by index.
    mutating func array(_ t: Int32) -> Bool {
        out.append(UInt8(ascii: "["))
        var expected: lua_Integer = 1
        while true {
            if lua_type(L, -2) == LUA_TNUMBER && lua_isinteger(L, -2) != 0 && lua_tointegerx(L, -2, nil) == expected {
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
        if pretty { newline(depth - 1) }
        out.append(UInt8(ascii: "]"))
        return true
    }

    @inline(__always)
    mutating func element(first: Bool, valueAt v: Int32) -> Bool {
        if !first { out.append(UInt8(ascii: ",")) }
        if pretty { newline(depth) }
        return value(v)
    }

    // MARK: errors

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
        return Self.quote(UnsafeBufferPointer(start: s, count: min(n, 60))) + (n > 60 ? "…" : "")
    }

    static func quote(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var text = "\""
        for b in bytes {
            switch b {
            case UInt8(ascii: "\""): text += "\\\""
            case UInt8(ascii: "\\"): text += "\\\\"
            case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(b))
            default: text += "\\x" + String(hex(b).dropFirst(2))
            }
        }
        return text + "\""
    }

    /// `$.a.b[2]` for the first `count` path entries (their current keys). Arrays show Lua's
    /// 1-based index; keys that are not identifiers show as `["key"]`.
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
                let bytes = UnsafeBufferPointer(start: key, count: e.keyLength)
                if Self.isIdentifier(bytes) {
                    text += "." + String(decoding: bytes, as: UTF8.self)
                } else {
                    text += "[" + Self.quote(UnsafeBufferPointer(start: key, count: min(e.keyLength, 60))) + "]"
                }
            } else {
                text += "[\(e.index)]"
            }
        }
        return text
    }

    static func isIdentifier(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = bytes.first, !(first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")) else { return false }
        return bytes.allSatisfy { b in
            (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "_")
        }
    }
}
