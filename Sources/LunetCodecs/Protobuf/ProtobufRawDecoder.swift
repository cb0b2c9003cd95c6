import CLunetLua
import Glibc
import LunetCore

/// Protobuf bytes decoded without a schema, straight onto a Lua stack (docs/protobuf.md,
/// "Without a schema"):
/// - a message → a table keyed by field number; each value the list of that field's
///   occurrences in order (or, with `single`, the value itself when it occurs once);
/// - varint → integer (the unsigned 64 bits reinterpreted as a Lua integer); fixed64 and
///   fixed32 → integers (their raw bits), the list marked `wire = "fixed64"` / `"fixed32"`;
///   length-delimited → a string, or with `guess` a nested table when it parses as a message;
/// - groups, bad wire types, field number 0, truncated values → `decode` errors.
///
/// The decoder is iterative (nested messages only come with `guess`): the depth limit, not the
/// C stack, is what stops deep input. Never raises: pushes and raw table access only.
enum PBRawDecoder {
    struct Options {
        var single = false
        var guess = false
        var maxDepth = PBWire.defaultMaxDepth
    }

    /// Decodes `bytes` and pushes the table (returns 1), or pushes a `decode` error object
    /// (returns LUNET_RAISE). Either way the stack ends exactly one value above where it was.
    static func decode(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer, _ options: Options) -> Int32 {
        let base = lua_gettop(L)
        guard lua_checkstack(L, 16) != 0 else {
            pbPushDecodeError(L, .luaStackFull, offset: 0)
            return LUNET_RAISE
        }
        guard bytes.count > 0, let raw = bytes.baseAddress else {
            lua_createtable(L, 0, 0)
            return 1
        }
        let start = raw.assumingMemoryBound(to: UInt8.self)
        var decoder = PBRawDecoderState(L: L, start: start, end: start + bytes.count, options: options)
        let ok = decoder.run()
        return decoder.finish(L, ok: ok, base: base, start: start)
    }

    /// Whether a length-delimited value is taken for a nested message when guessing: it is
    /// not empty, it is not printable text, and it parses as a message to its last byte
    /// (valid tags, field numbers 1...2^29-1, wire types 0, 1, 2, 5, lengths inside).
    static func looksLikeMessage(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        guard n > 0, !looksLikeText(p, n) else { return false }
        var q = p
        let end = p + n
        while q < end {
            var tag: UInt64 = 0
            guard PBWire.readVarint(&q, end, &tag) == .ok else { return false }
            let field = tag >> 3
            guard field != 0 && field <= PBWire.maxFieldNumber else { return false }
            switch UInt8(tag & 7) {
            case PBWire.varint:
                guard q < end else { return false }
                var v: UInt64 = 0
                guard PBWire.readVarint(&q, end, &v) == .ok else { return false }
            case PBWire.fixed64:
                guard end - q >= 8 else { return false }
                q += 8
            case PBWire.fixed32:
                guard end - q >= 4 else { return false }
                q += 4
            case PBWire.len:
                guard q < end else { return false }
                var length: UInt64 = 0
                guard PBWire.readVarint(&q, end, &length) == .ok, length <= UInt64(end - q) else { return false }
                q += Int(length)
            default:
                return false
            }
        }
        return true
    }

    /// Printable text: valid UTF-8 that starts with a printable character and has no control
    /// characters but tab, newline and carriage return.
    static func looksLikeText(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        guard p[0] >= 0x20 && p[0] != 0x7F else { return false }
        for i in 0..<n {
            let c = p[i]
            if c < 0x20 && c != 0x09 && c != 0x0A && c != 0x0D { return false }
            if c == 0x7F { return false }
        }
        return PBWire.invalidUTF8Offset(p, n) < 0
    }
}

/// A field's integer occurrences' wire type so far, for the list's `wire` marker.
enum PBIntWire {
    static let none: UInt8 = 0
    static let varint: UInt8 = 1
    static let fixed64: UInt8 = 2
    static let fixed32: UInt8 = 3
    static let mixed: UInt8 = 4

    @inline(__always)
    static func of(_ wire: UInt8) -> UInt8 {
        wire == PBWire.varint ? varint : wire == PBWire.fixed64 ? fixed64 : fixed32
    }

    static func name(_ state: UInt8) -> StaticString {
        switch state {
        case fixed64: return "fixed64"
        case fixed32: return "fixed32"
        default: return "varint"
        }
    }
}

/// Appends the value on top of the stack to the occurrence list at `list` (absolute), popping
/// it, and keeps the list's `wire` marker right: absent while every integer in it is a varint;
/// "fixed64" or "fixed32" when every integer is that; a list of per-occurrence wire type names
/// when they mix. Needs two free stack slots.
@inline(__always)
func pbAppendOccurrence(_ L: OpaquePointer, list: Int32, wire: UInt8, state: inout UInt8) {
    let n = lua_Integer(lua_rawlen(L, list)) + 1
    lua_rawseti(L, list, n)
    if wire == PBWire.len {
        if state == PBIntWire.mixed { pbAppendWireName(L, list, n, "len") }
        return
    }
    let s = PBIntWire.of(wire)
    if state != s { pbWireChanged(L, list, n, s, &state) }
}

@inline(never)
func pbWireChanged(_ L: OpaquePointer, _ list: Int32, _ n: lua_Integer, _ s: UInt8, _ state: inout UInt8) {
    switch state {
    case PBIntWire.none:
        state = s
        if s != PBIntWire.varint {
            _ = lua_pushstring(L, PBIntWire.name(s).utf8Start)
            lunet_rawsetfield(L, list, "wire")
        }
    case PBIntWire.mixed:
        pbAppendWireName(L, list, n, PBIntWire.name(s))
    default:
        // From one integer wire type to another: name every occurrence so far.
        let old = state
        lua_createtable(L, Int32(clamping: n), 0)
        var i: lua_Integer = 1
        while i < n {
            let type = lua_rawgeti(L, list, i)
            lua_settop(L, -2)
            let name: StaticString = type == LUA_TNUMBER || type == LUA_TBOOLEAN ? PBIntWire.name(old) : "len"
            _ = lua_pushstring(L, name.utf8Start)
            lua_rawseti(L, -2, i)
            i += 1
        }
        _ = lua_pushstring(L, PBIntWire.name(s).utf8Start)
        lua_rawseti(L, -2, n)
        lunet_rawsetfield(L, list, "wire")
        state = PBIntWire.mixed
    }
}

@inline(never)
func pbAppendWireName(_ L: OpaquePointer, _ list: Int32, _ n: lua_Integer, _ name: StaticString) {
    if lunet_rawgetfield(L, list, "wire") == LUA_TTABLE {
        _ = lua_pushstring(L, name.utf8Start)
        lua_rawseti(L, -2, n)
    }
    lua_settop(L, -2)
}

/// An open message: its table, and the list of the field last seen in it at table + 1.
struct PBRawFrame {
    var end: UnsafePointer<UInt8>
    var table: Int32
    var field: UInt64
    var state: UInt8
    var serial: UInt64
}

struct PBRawDecoderState: PBDecoding {
    let L: OpaquePointer
    var cursor: PBCursor
    /// Where the decoder reads next (the cursor's position).
    var p: UnsafePointer<UInt8> {
        @inline(__always) get { cursor.p }
        @inline(__always) set { cursor.p = newValue }
    }
    let single: Bool
    let guess: Bool
    let maxDepth: Int
    var frames: UnsafeMutablePointer<PBRawFrame>? = nil
    var frameCapacity = 0
    var depth = 0
    var serial: UInt64 = 0
    /// Wire states of lists left behind (a field seen again after another one).
    var states: [UInt64: UInt8] = [:]

    init(L: OpaquePointer, start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, options: PBRawDecoder.Options) {
        self.L = L
        self.cursor = PBCursor(start)
        self.single = options.single
        self.guess = options.guess
        self.maxDepth = max(0, options.maxDepth)
        growFrames()
        lua_createtable(L, 0, 4)
        lua_pushnil(L)
        frames.unsafelyUnwrapped[0] = PBRawFrame(end: end, table: lua_gettop(L) - 1, field: 0, state: 0, serial: 0)
    }

    mutating func run() -> Bool {
        while true {
            let f = frames.unsafelyUnwrapped + depth
            let end = f.pointee.end
            if p == end {
                if !close() { return true }
                continue
            }
            let tagAt = p
            guard let (field, wire) = cursor.readTag(end) else { return false }
            switch wire {
            case PBWire.varint:
                var v: UInt64 = 0
                guard cursor.readVarint(end, "field \(field)", &v) else { return false }
                selectList(f, field)
                lua_pushinteger(L, lua_Integer(Int64(bitPattern: v)))
                pbAppendOccurrence(L, list: f.pointee.table + 1, wire: wire, state: &f.pointee.state)
            case PBWire.fixed64:
                guard end - p >= 8 else { return cursor.fail(.truncatedFixed(8, "field \(field)"), at: p) }
                selectList(f, field)
                lua_pushinteger(L, lua_Integer(Int64(bitPattern: PBWire.loadFixed64(p))))
                p += 8
                pbAppendOccurrence(L, list: f.pointee.table + 1, wire: wire, state: &f.pointee.state)
            case PBWire.fixed32:
                guard end - p >= 4 else { return cursor.fail(.truncatedFixed(4, "field \(field)"), at: p) }
                selectList(f, field)
                lua_pushinteger(L, lua_Integer(PBWire.loadFixed32(p)))
                p += 4
                pbAppendOccurrence(L, list: f.pointee.table + 1, wire: wire, state: &f.pointee.state)
            case PBWire.len:
                var n = 0
                guard cursor.readLength(end, field, &n) else { return false }
                selectList(f, field)
                if guess && PBRawDecoder.looksLikeMessage(p, n) {
                    guard depth < maxDepth else { return cursor.fail(.tooDeep(maxDepth), at: tagAt) }
                    guard lua_checkstack(L, 8) != 0 else { return cursor.fail(.luaStackFull, at: tagAt) }
                    if depth + 1 == frameCapacity { growFrames() }
                    serial += 1
                    lua_createtable(L, 0, 4)
                    lua_pushnil(L)
                    depth += 1
                    frames.unsafelyUnwrapped[depth] = PBRawFrame(end: p + n, table: lua_gettop(L) - 1, field: 0, state: 0, serial: serial)
                    continue
                }
                lua_pushlstring(L, UnsafeRawPointer(p).assumingMemoryBound(to: CChar.self), n)
                p += n
                pbAppendOccurrence(L, list: f.pointee.table + 1, wire: wire, state: &f.pointee.state)
            case PBWire.startGroup:
                return cursor.fail(.group(field), at: tagAt)
            case PBWire.endGroup:
                return cursor.fail(.endGroup(field), at: tagAt)
            default:
                return cursor.fail(.invalidWireType(wire, field), at: tagAt)
            }
        }
    }

    /// Makes the list of `field` the frame's current list (at table + 1), creating it on first use.
    @inline(__always)
    mutating func selectList(_ f: UnsafeMutablePointer<PBRawFrame>, _ field: UInt64) {
        if f.pointee.field == field { return }
        switchList(f, field)
    }

    @inline(never)
    mutating func switchList(_ f: UnsafeMutablePointer<PBRawFrame>, _ field: UInt64) {
        let t = f.pointee.table
        if f.pointee.field != 0 && f.pointee.state != PBIntWire.none {
            states[f.pointee.serial << 32 | f.pointee.field] = f.pointee.state
        }
        f.pointee.field = field
        if lua_rawgeti(L, t, lua_Integer(field)) == LUA_TTABLE {
            lunet_replace(L, t + 1)
            f.pointee.state = states[f.pointee.serial << 32 | field] ?? PBIntWire.none
        } else {
            lua_settop(L, -2)
            lua_createtable(L, 1, 0)
            lua_pushvalue(L, -1)
            lua_rawseti(L, t, lua_Integer(field))
            lunet_replace(L, t + 1)
            f.pointee.state = PBIntWire.none
        }
    }

    /// At the end of the innermost message: attaches it to its parent's current list. Returns
    /// false when it was the top-level message (left at the top of the stack).
    mutating func close() -> Bool {
        let t = frames.unsafelyUnwrapped[depth].table
        if single { Self.collapse(L, t) }
        lua_settop(L, t)
        if depth == 0 { return false }
        depth -= 1
        let parent = frames.unsafelyUnwrapped + depth
        pbAppendOccurrence(L, list: parent.pointee.table + 1, wire: PBWire.len, state: &parent.pointee.state)
        return true
    }

    /// `single`: each list of one occurrence replaced by the occurrence.
    static func collapse(_ L: OpaquePointer, _ t: Int32) {
        lua_pushnil(L)
        while lua_next(L, t) != 0 {
            if lua_type(L, -1) == LUA_TTABLE && lua_rawlen(L, -1) == 1 {
                lua_rawgeti(L, -1, 1)
                lua_pushvalue(L, -3)
                lua_rotate(L, -2, 1)
                lua_rawset(L, t)
            }
            lua_settop(L, -2)
        }
    }
}
