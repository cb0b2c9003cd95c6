import CLunet
import LunetLuaStack
import Glibc
import LunetCore

/// The bounds of each thread's stack, for the recursive encoder.
enum PBStack {
    struct Bounds {
        var floor: UInt     // the lowest address the encoder may reach (64 KB above the end); 0: unknown
        var high: UInt
    }

    static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        return key
    }()

    /// This thread's stack, from pthread_getattr_np (looked up with dlsym, as Swift's Glibc
    /// module leaves GNU extensions out); found once per thread.
    static func bounds() -> Bounds {
        if let known = pthread_getspecific(key) { return known.load(as: Bounds.self) }
        var bounds = Bounds(floor: 0, high: 0)
        typealias GetAttr = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32
        if let symbol = dlsym(nil, "pthread_getattr_np") {
            var attr = pthread_attr_t()
            if unsafeBitCast(symbol, to: GetAttr.self)(pthread_self(), &attr) == 0 {
                var low: UnsafeMutableRawPointer? = nil
                var size = 0
                if pthread_attr_getstack(&attr, &low, &size) == 0, let low, size > 128 * 1024 {
                    bounds = Bounds(floor: UInt(bitPattern: low) + 64 * 1024, high: UInt(bitPattern: low) + UInt(size))
                }
                pthread_attr_destroy(&attr)
            }
        }
        guard let slot = malloc(MemoryLayout<Bounds>.size) else { pbOutOfMemory() }
        slot.storeBytes(of: bounds, as: Bounds.self)
        pthread_setspecific(key, slot)
        return bounds
    }

    /// Whether the stack has room below the caller.
    @inline(never)
    static func hasRoom(_ bounds: Bounds) -> Bool {
        guard bounds.floor != 0 else { return true }
        var marker: UInt8 = 0
        var here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
        if here < bounds.floor - 64 * 1024 || here >= bounds.high {
            // Not on this thread's stack: AddressSanitizer keeps such locals on a heap
            // "fake stack". Ask the CPU's stack pointer instead.
            guard let sp = stackPointer() else { return true }
            here = sp
        }
        return here > bounds.floor
    }

    static func stackPointer() -> UInt? {
        typealias GetContext = @convention(c) (UnsafeMutablePointer<ucontext_t>) -> Int32
        guard let symbol = dlsym(nil, "getcontext") else { return nil }
        var context = ucontext_t()
        guard unsafeBitCast(symbol, to: GetContext.self)(&context) == 0 else { return nil }
        #if arch(x86_64)
        return withUnsafeBytes(of: context.uc_mcontext.gregs) { UInt(bitPattern: Int($0.load(fromByteOffset: 15 * 8, as: Int64.self))) }   // REG_RSP
        #elseif arch(arm64)
        return UInt(context.uc_mcontext.sp)
        #else
        return nil
        #endif
    }
}

/// The encoder's first error message.
final class PBEncodeFailure {
    var message: String? = nil
}

/// Where the encoder is, for error messages: `$.items[2].id`.
struct PBPathEntry {
    static let field: UInt8 = 0      // value: a schema field index → ".name"
    static let number: UInt8 = 1     // value: a field number → "[n]"
    static let index: UInt8 = 2      // value: a 1-based list index → "[i]"
    static let key: UInt8 = 3        // value: the stack index of a map key or unknown name → `["k"]`, `[5]`
    static let name: UInt8 = 4       // value: the stack index of a string key → ".k" or `["k"]`
    var kind: UInt8
    var value: Int64
}

/// Lua tables encoded straight into protobuf bytes: the schemaless shape (tables keyed by
/// field number, each value a list of occurrences) and, with a schema, named fields. The
/// encoder recurses per nested message, so `maxDepth` is capped (`PBEncoder.depthCap`).
/// Never raises: raw table access, lua_next, pushes and lua_checkstack only.
struct PBEncoder {
    /// The deepest nesting encode accepts, whatever max_depth asks: it recurses on the C stack
    /// (and stops earlier, with an error, when the thread's stack runs low: `PBStack`).
    static let depthCap = 1000

    typealias FT = PBSchema.FieldType

    let L: OpaquePointer
    var out = PBWriter()
    let maxDepth: Int
    var depth = 0
    var tables: UnsafeMutablePointer<UnsafeRawPointer?>? = nil
    var tablesCapacity = 0
    var path: UnsafeMutablePointer<PBPathEntry>? = nil
    var pathCount = 0
    var pathCapacity = 0
    var scratch: UnsafeMutablePointer<Int64>? = nil
    var scratchCount = 0
    var scratchCapacity = 0
    let failure = PBEncodeFailure()
    /// This thread's stack (found on first use). Each level checks there is room left, so
    /// that a thread with a small stack gets an error rather than a crash.
    var stackBounds = PBStack.Bounds(floor: 0, high: 0)
    var haveStackBounds = false
    let schema: PBSchema?
    let names: Int32

    init(L: OpaquePointer, maxDepth: Int, schema: PBSchema? = nil, names: Int32 = 0) {
        self.L = L
        self.maxDepth = min(max(0, maxDepth), Self.depthCap)
        self.schema = schema
        self.names = names
    }

    mutating func release() {
        out.release()
        free(tables)
        free(path)
        free(scratch)
        tables = nil
        path = nil
        scratch = nil
    }

    // MARK: bookkeeping

    /// Before the fields of the message table at `t`: the depth and cycle checks.
    mutating func enter(_ t: Int32) -> Bool {
        let pointer = lua_topointer(L, t)
        for d in 0..<depth where tables.unsafelyUnwrapped[d] == pointer {
            return fail { "cannot encode a table that contains itself (a reference cycle)" }
        }
        guard depth <= maxDepth else { return fail { "cannot encode: messages nested deeper than \(maxDepth) levels" } }
        if !stackLeft() {
            return fail { "cannot encode: messages nested too deep for the C stack" }
        }
        guard lua_checkstack(L, 12) != 0 else { return fail { "cannot encode: the Lua stack is full" } }
        if depth == tablesCapacity {
            tablesCapacity = max(16, tablesCapacity * 2)
            guard let grown = realloc(tables, tablesCapacity * MemoryLayout<UnsafeRawPointer?>.stride) else { pbOutOfMemory() }
            tables = grown.assumingMemoryBound(to: UnsafeRawPointer?.self)
        }
        tables.unsafelyUnwrapped[depth] = pointer
        depth += 1
        return true
    }

    @inline(__always)
    mutating func leave() { depth -= 1 }

    /// Whether at least 64 KB of this thread's stack are left below here.
    @inline(__always)
    mutating func stackLeft() -> Bool {
        if !haveStackBounds {
            stackBounds = PBStack.bounds()
            haveStackBounds = true
        }
        return PBStack.hasRoom(stackBounds)
    }

    @inline(__always)
    mutating func pushPath(_ kind: UInt8, _ value: Int64) {
        if pathCount == pathCapacity {
            pathCapacity = max(16, pathCapacity * 2)
            guard let grown = realloc(path, pathCapacity * MemoryLayout<PBPathEntry>.stride) else { pbOutOfMemory() }
            path = grown.assumingMemoryBound(to: PBPathEntry.self)
        }
        path.unsafelyUnwrapped[pathCount] = PBPathEntry(kind: kind, value: value)
        pathCount += 1
    }

    @inline(__always)
    mutating func popPath() { pathCount -= 1 }

    @inline(__always)
    mutating func addScratch(_ v: Int64) {
        if scratchCount == scratchCapacity {
            scratchCapacity = max(64, scratchCapacity * 2)
            guard let grown = realloc(scratch, scratchCapacity * MemoryLayout<Int64>.stride) else { pbOutOfMemory() }
            scratch = grown.assumingMemoryBound(to: Int64.self)
        }
        scratch.unsafelyUnwrapped[scratchCount] = v
        scratchCount += 1
    }

    mutating func sortScratch(from mark: Int) {
        let buffer = UnsafeMutableBufferPointer(start: scratch.map { $0 + mark }, count: scratchCount - mark)
        var b = buffer
        b.sort()
    }

    /// Records the first error (the message is only made when it is one, out of line, so
    /// the recursive functions keep small stack frames).
    @inline(never)
    func fail(_ text: () -> String) -> Bool {
        if failure.message == nil { failure.message = "protobuf: \(text()) at \(pathString())" }
        return false
    }

    var error: String? { failure.message }

    /// `$.items[2].id` for the current path.
    func pathString() -> String {
        var text = "$"
        let count = pathCount
        for i in 0..<count {
            if count > 40 && i == 20 { text += "…" }
            if count > 40 && i >= 20 && i < count - 10 { continue }
            let e = path.unsafelyUnwrapped[i]
            switch e.kind {
            case PBPathEntry.field:
                text += "." + (schema?.fieldNames[Int(e.value)] ?? "?")
            case PBPathEntry.number, PBPathEntry.index:
                text += "[\(e.value)]"
            default:
                let k = Int32(e.value)
                switch lua_type(L, k) {
                case LUA_TSTRING:
                    var n = 0
                    let s = UnsafeRawPointer(lua_tolstring(L, k, &n)!).assumingMemoryBound(to: UInt8.self)
                    if e.kind == PBPathEntry.name && PBText.isIdentifier(s, n) {
                        text += "." + String(decoding: UnsafeBufferPointer(start: s, count: n), as: UTF8.self)
                    } else {
                        text += "[" + PBText.quote(s, n) + "]"
                    }
                case LUA_TNUMBER:
                    text += lua_isinteger(L, k) != 0 ? "[\(lua_tointegerx(L, k, nil))]" : "[\(lua_tonumberx(L, k, nil))]"
                case LUA_TBOOLEAN:
                    text += lua_toboolean(L, k) != 0 ? "[true]" : "[false]"
                default:
                    text += "[" + String(cString: lua_typename(L, lua_type(L, k))) + "]"
                }
            }
        }
        return text
    }

    /// "a string", "an integer", "the float 1.5" for messages.
    func describe(_ i: Int32) -> String {
        switch lua_type(L, i) {
        case LUA_TNUMBER:
            if lua_isinteger(L, i) != 0 { return "the integer \(lua_tointegerx(L, i, nil))" }
            return "the float \(lua_tonumberx(L, i, nil))"
        case LUA_TSTRING: return "a string"
        case LUA_TBOOLEAN: return lua_toboolean(L, i) != 0 ? "true" : "false"
        case LUA_TNIL: return "nil"
        case LUA_TTABLE: return "a table"
        default: return "a " + String(cString: lua_typename(L, lua_type(L, i)))
        }
    }

    /// A key for messages: `'name'`, `5`, or its type.
    func describeKey(_ i: Int32) -> String {
        switch lua_type(L, i) {
        case LUA_TSTRING:
            var n = 0
            let s = UnsafeRawPointer(lua_tolstring(L, i, &n)!).assumingMemoryBound(to: UInt8.self)
            return PBText.quote(s, n)
        case LUA_TNUMBER:
            return lua_isinteger(L, i) != 0 ? "\(lua_tointegerx(L, i, nil))" : "\(lua_tonumberx(L, i, nil))"
        default:
            return "of type " + String(cString: lua_typename(L, lua_type(L, i)))
        }
    }

    /// The integer value of a number (a float only when it is integral), or nil.
    @inline(__always)
    func integer(_ i: Int32) -> Int64? {
        var isnum: Int32 = 0
        let v = lua_tointegerx(L, i, &isnum)
        return isnum != 0 && lua_type(L, i) == LUA_TNUMBER ? Int64(v) : nil
    }

    /// Counts the keys of the table at `t` and checks they are exactly 1..n (skipping the
    /// string key `allow` when given). Returns n, or nil after failing with `what`.
    mutating func listLength(_ t: Int32, allowing allow: String? = nil, _ what: @autoclosure () -> String) -> Int? {
        let n = Int(lua_rawlen(L, t))
        var count = 0
        lua_pushnil(L)
        while lua_next(L, t) != 0 {
            lua_settop(L, -2)
            if lua_type(L, -1) == LUA_TNUMBER && lua_isinteger(L, -1) != 0 {
                let k = lua_tointegerx(L, -1, nil)
                if k >= 1 && k <= n {
                    count += 1
                    continue
                }
                if k > n {
                    lua_settop(L, -2)
                    _ = fail { "cannot encode a table with holes as \(what()) (a list with keys 1..n expected)" }
                    return nil
                }
            } else if let allow, lua_type(L, -1) == LUA_TSTRING, LuaStack(L).string(-1) == allow {
                continue
            }
            let key = describeKey(-1)
            lua_settop(L, -2)
            _ = fail { "cannot encode a table with the key \(key) as \(what()) (a list with keys 1..n expected)" }
            return nil
        }
        guard count == n else {
            _ = fail { "cannot encode a table with holes as \(what()) (a list with keys 1..n expected)" }
            return nil
        }
        return n
    }

    // MARK: - Without a schema

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

    // MARK: - With a schema

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
                    return fail { "cannot encode a string that is not valid UTF-8 (byte \(PBText.hex(byte)) at offset \(bad + 1)) as string (use a bytes field for binary data)" }
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
