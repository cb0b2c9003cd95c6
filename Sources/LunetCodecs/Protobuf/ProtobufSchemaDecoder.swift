import CLunet
import LunetLuaStack
import Glibc
import LunetCore

/// Protobuf bytes decoded with a schema, straight onto a Lua stack (docs/protobuf.md, "With a
/// schema"): a table of named fields per message; scalars by their declared type; enums as
/// value names (unknown numbers as numbers); repeated fields as lists, packed or not; maps as
/// tables keyed by the map key; nested messages as tables (a message that occurs twice is
/// merged into the first, as protobuf does); oneofs as their one member that was set last;
/// unknown fields (and fields with an unexpected wire type) under their field number, as
/// `protobuf.decode` gives them, or dropped with `unknown = false`.
///
/// Iterative: the depth limit, not the C stack, stops deep input. Never raises.
struct PBSchemaDecoder {
    struct Options {
        var maxDepth = PBWire.defaultMaxDepth
        var keepUnknown = true
        var defaults = false
    }

    /// Decodes `bytes` as message `message` and pushes the table (returns 1), or pushes a
    /// `decode` error object (returns LUNET_RAISE): exactly one value more on the stack.
    /// `names` is the absolute index of the schema's names table.
    static func decode(_ L: OpaquePointer, _ schema: PBSchema, names: Int32, message: Int32,
                       _ bytes: UnsafeRawBufferPointer, _ options: Options) -> Int32 {
        let base = lua_gettop(L)
        guard lua_checkstack(L, 16) != 0 else {
            pbPushDecodeError(L, .luaStackFull, offset: 0)
            return LUNET_RAISE
        }
        guard bytes.count > 0, let raw = bytes.baseAddress else {
            // No bytes: the empty message (the decoder still runs, for `defaults`).
            var zero: UInt8 = 0
            return withUnsafeMutablePointer(to: &zero) { p in
                run(L, schema, names: names, message: message, start: p, count: 0, options, base: base)
            }
        }
        return run(L, schema, names: names, message: message, start: raw.assumingMemoryBound(to: UInt8.self),
                   count: bytes.count, options, base: base)
    }

    private static func run(_ L: OpaquePointer, _ schema: PBSchema, names: Int32, message: Int32,
                            start: UnsafePointer<UInt8>, count: Int, _ options: Options, base: Int32) -> Int32 {
        var d = PBSchemaDecoder(L: L, schema: schema, names: names, start: start, end: start + count,
                                message: message, options: options)
        let ok = d.run()
        let failure = d.failure
        let offset = d.failureAt - start
        d.release()
        if ok {
            lua_settop(L, base + 1)
            return 1
        }
        lua_settop(L, base)
        pbPushDecodeError(L, failure ?? .other("cannot decode"), offset: offset)
        return LUNET_RAISE
    }

    typealias FT = PBSchema.FieldType

    /// An open message. Its table is at `table`; a list element's list, or a map entry's map,
    /// is just below it.
    struct Frame {
        var message: Int32
        var end: UnsafePointer<UInt8>
        var table: Int32
        var kind: UInt8
        var serial: UInt64
    }
    static let root: UInt8 = 0, singular: UInt8 = 1, element: UInt8 = 2, mapEntry: UInt8 = 3

    let L: OpaquePointer
    let schema: PBSchema
    let fields: UnsafeMutablePointer<PBSchema.Field>
    let names: Int32
    let start: UnsafePointer<UInt8>
    var p: UnsafePointer<UInt8>
    let maxDepth: Int
    let keepUnknown: Bool
    let defaults: Bool
    var frames: UnsafeMutablePointer<Frame>? = nil
    var frameCapacity = 0
    var depth = 0
    var serial: UInt64 = 0
    var states: [UInt64: UInt8] = [:]
    var failure: PBProblem? = nil
    var failureAt: UnsafePointer<UInt8>

    init(L: OpaquePointer, schema: PBSchema, names: Int32, start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>,
         message: Int32, options: Options) {
        self.L = L
        self.schema = schema
        self.fields = schema.fields.baseAddress ?? UnsafeMutablePointer(bitPattern: MemoryLayout<PBSchema.Field>.alignment)!
        self.names = names
        self.start = start
        self.p = start
        self.maxDepth = max(0, options.maxDepth)
        self.keepUnknown = options.keepUnknown
        self.defaults = options.defaults
        self.failureAt = start
        growFrames()
        lua_createtable(L, 0, 4)
        frames.unsafelyUnwrapped[0] = Frame(message: message, end: end, table: lua_gettop(L), kind: Self.root, serial: 0)
    }

    mutating func release() {
        free(frames)
        frames = nil
    }

    @inline(never)
    mutating func growFrames() {
        let capacity = max(16, frameCapacity * 2)
        guard let grown = realloc(frames, capacity * MemoryLayout<Frame>.stride) else { pbOutOfMemory() }
        frames = grown.assumingMemoryBound(to: Frame.self)
        frameCapacity = capacity
    }

    @inline(never)
    mutating func fail(_ problem: PBProblem, at q: UnsafePointer<UInt8>) -> Bool {
        failure = problem
        failureAt = q
        return false
    }

    @inline(__always)
    mutating func readVarint(_ end: UnsafePointer<UInt8>, _ what: @autoclosure () -> String, _ v: inout UInt64) -> Bool {
        guard p < end else { return fail(.truncatedVarint(what()), at: p) }
        let at = p
        switch PBWire.readVarint(&p, end, &v) {
        case .ok: return true
        case .truncated: return fail(.truncatedVarint(what()), at: at)
        case .overflow: return fail(.varintOverflow(what()), at: at)
        }
    }

    /// A length at p, checked against `end`.
    @inline(__always)
    mutating func readLength(_ end: UnsafePointer<UInt8>, _ field: UInt64, _ n: inout Int) -> Bool {
        let at = p
        var length: UInt64 = 0
        guard readVarint(end, "the length of field \(field)", &length) else { return false }
        let left = end - p
        guard length <= UInt64(left) else { return fail(.lengthPastEnd(length, left), at: at) }
        n = Int(length)
        return true
    }

    mutating func run() -> Bool {
        let schema = self.schema
        while true {
            let f = frames.unsafelyUnwrapped + depth
            let end = f.pointee.end
            if p == end {
                if !close() { return true }
                continue
            }
            let tagAt = p
            var tag: UInt64 = 0
            switch PBWire.readVarint(&p, end, &tag) {
            case .ok: break
            case .truncated: return fail(.truncatedVarint("a field tag"), at: tagAt)
            case .overflow: return fail(.varintOverflow("a field tag"), at: tagAt)
            }
            let number = tag >> 3
            let wire = UInt8(truncatingIfNeeded: tag & 7)
            guard number != 0 else { return fail(.fieldNumberZero, at: tagAt) }
            guard number <= PBWire.maxFieldNumber else { return fail(.fieldNumberTooLarge(number), at: tagAt) }
            let fi = schema.field(f.pointee.message, number)
            guard fi >= 0 else {
                guard unknown(f.pointee.table, f.pointee.serial, number, wire, tagAt, end) else { return false }
                continue
            }
            let fd = fields[Int(fi)]
            let expected = FT.wire(fd.type)
            if wire != expected {
                if wire == PBWire.len && fd.repeated && expected != PBWire.len && expected != PBWire.startGroup {
                    guard packed(f.pointee.table, fi, number, end) else { return false }
                    continue
                }
                if expected == PBWire.startGroup && wire == PBWire.startGroup {
                    return fail(.group(number), at: tagAt)
                }
                guard unknown(f.pointee.table, f.pointee.serial, number, wire, tagAt, end) else { return false }
                continue
            }
            switch wire {
            case PBWire.startGroup:
                return fail(.group(number), at: tagAt)
            case PBWire.varint:
                var v: UInt64 = 0
                guard readVarint(end, "field \(schema.fieldPath(fi))", &v) else { return false }
                pushVarint(fd, v)
            case PBWire.fixed64:
                guard end - p >= 8 else { return fail(.truncatedFixed(8, "field \(schema.fieldPath(fi))"), at: p) }
                pushFixed64(fd.type, PBWire.loadFixed64(p))
                p += 8
            case PBWire.fixed32:
                guard end - p >= 4 else { return fail(.truncatedFixed(4, "field \(schema.fieldPath(fi))"), at: p) }
                pushFixed32(fd.type, PBWire.loadFixed32(p))
                p += 4
            default:
                var n = 0
                guard readLength(end, number, &n) else { return false }
                if fd.type == FT.message {
                    guard open(f.pointee.table, fi, fd, n, tagAt) else { return false }
                    continue
                }
                if fd.type == FT.string {
                    let bad = PBWire.invalidUTF8Offset(p, n)
                    if bad >= 0 { return fail(.invalidUTF8(schema.fieldPath(fi), p[bad]), at: p + bad) }
                }
                lua_pushlstring(L, UnsafeRawPointer(p).assumingMemoryBound(to: CChar.self), n)
                p += n
            }
            store(f.pointee.table, fi, fd)
        }
    }

    // MARK: values

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
        guard readLength(end, number, &n) else { return false }
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
                guard readVarint(stop, "packed field \(schema.fieldPath(fi))", &v) else { return false }
                pushVarint(fd, v)
                k += 1
                lua_rawseti(L, list, k)
            }
        case PBWire.fixed64:
            guard n % 8 == 0 else { return fail(.truncatedFixed(8, "packed field \(schema.fieldPath(fi))"), at: p + (n - n % 8)) }
            while p < stop {
                pushFixed64(fd.type, PBWire.loadFixed64(p))
                p += 8
                k += 1
                lua_rawseti(L, list, k)
            }
        default:
            guard n % 4 == 0 else { return fail(.truncatedFixed(4, "packed field \(schema.fieldPath(fi))"), at: p + (n - n % 4)) }
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
    mutating func unknown(_ t: Int32, _ frameSerial: UInt64, _ number: UInt64, _ wire: UInt8,
                          _ tagAt: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Bool {
        switch wire {
        case PBWire.varint:
            var v: UInt64 = 0
            guard readVarint(end, "field \(number)", &v) else { return false }
            lua_pushinteger(L, lua_Integer(Int64(bitPattern: v)))
        case PBWire.fixed64:
            guard end - p >= 8 else { return fail(.truncatedFixed(8, "field \(number)"), at: p) }
            lua_pushinteger(L, lua_Integer(Int64(bitPattern: PBWire.loadFixed64(p))))
            p += 8
        case PBWire.fixed32:
            guard end - p >= 4 else { return fail(.truncatedFixed(4, "field \(number)"), at: p) }
            lua_pushinteger(L, lua_Integer(PBWire.loadFixed32(p)))
            p += 4
        case PBWire.len:
            var n = 0
            guard readLength(end, number, &n) else { return false }
            lua_pushlstring(L, UnsafeRawPointer(p).assumingMemoryBound(to: CChar.self), n)
            p += n
        case PBWire.startGroup:
            return fail(.group(number), at: tagAt)
        case PBWire.endGroup:
            return fail(.endGroup(number), at: tagAt)
        default:
            return fail(.invalidWireType(wire, number), at: tagAt)
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
        let key = frameSerial << 32 | number
        var state = states[key] ?? PBIntWire.none
        let before = state
        pbAppendOccurrence(L, list: lua_gettop(L) - 1, wire: wire, state: &state)
        if state != before { states[key] = state }
        lua_settop(L, -2)
        return true
    }

    // MARK: nested messages

    /// Opens the nested message of field `fi`, `n` bytes from p.
    mutating func open(_ t: Int32, _ fi: Int32, _ fd: PBSchema.Field, _ n: Int, _ tagAt: UnsafePointer<UInt8>) -> Bool {
        guard depth < maxDepth else { return fail(.tooDeep(maxDepth), at: tagAt) }
        guard lua_checkstack(L, 12) != 0 else { return fail(.luaStackFull, at: tagAt) }
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
        serial += 1
        depth += 1
        frames.unsafelyUnwrapped[depth] = Frame(message: fd.typeIndex, end: p + n, table: lua_gettop(L), kind: kind, serial: serial)
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
