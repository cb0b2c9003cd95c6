import CLunetLua
import Glibc

/// An open array or object.
///
/// Its items (values, or key/value pairs) first pile up on the Lua stack from `base`; when it
/// closes, its table is made with the exact size (`lua_createtable(n, 0)` or `(0, n)`) and
/// filled, so small tables never rehash. A container with more than `JSONParser.pendingLimit`
/// items gets its table at once (sized for twice what it has) and takes the rest directly.
/// An object whose depth last closed an object of n members (n up to `objectHintLimit`) gets
/// a table for n at once and takes its members directly: the records of an array have the
/// same members, and moving each from the stack into the table cost two pushes apiece.
struct JSONFrame {
    var base: Int32             // stack index of its first item, and of its table once made
    var count: Int              // items so far
    var isArray: Bool
    var direct: Bool            // the table exists (at `base`) and items go straight into it
    var lastObjectSize = 0      // members of the last object closed at this depth (0: none)
}

/// An iterative parser: open containers live on the Lua stack and in `frames`, so nesting
/// depth costs heap and Lua stack (checked with lua_checkstack), never C stack.
struct JSONParser {
    static let pendingLimit = 256
    static let objectHintLimit = 64
    static let stackReserve: Int32 = 64

    let L: OpaquePointer
    let start: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>
    var p: UnsafePointer<UInt8>
    let nullIndex: Int32
    let arrayMetatableIndex: Int32
    let maxDepth: Int

    var frames: UnsafeMutablePointer<JSONFrame>? = nil
    var frameCapacity = 0
    var framesInitialised = 0   // frames below this depth hold a lastObjectSize
    /// Decoded bytes of the string being unescaped, and NUL-terminated number text.
    var scratch = ByteWriter(owner: "the JSON codec")
    /// The key cache (JSONParser+Keys.swift): its entries, and the stack index of its first slot.
    var keySlots: UnsafeMutablePointer<JSONKeySlot>? = nil
    var keyStackBase: Int32 = 0
    /// 64 less the bits of a key's hash that pick its set in the key cache.
    var keySetShift: UInt64 = 58

    /// Stack slots up to this index are known to exist (lua_checkstack holds for the whole call).
    var stackLimit: Int32 = 0

    var failure: LuaJSONDecoder.Problem = .none
    var failureOffset = 0

    init(L: OpaquePointer, start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, nullIndex: Int32,
         arrayMetatableIndex: Int32, maxDepth: Int) {
        self.L = L
        self.start = start
        self.end = end
        self.p = start
        self.nullIndex = nullIndex
        self.arrayMetatableIndex = arrayMetatableIndex
        self.maxDepth = maxDepth
    }

    mutating func release() {
        free(frames)
        free(keySlots)
        scratch.release()
        frames = nil
        keySlots = nil
    }

    @inline(never)
    mutating func fail(_ problem: LuaJSONDecoder.Problem, at q: UnsafePointer<UInt8>) -> Bool {
        failure = problem
        failureOffset = q - start
        return false
    }

    // MARK: document and values

    mutating func parseDocument() -> Bool {
        // A UTF-8 byte order mark is not JSON, but RFC 8259 lets a parser ignore one.
        if end - p >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF { p += 3 }
        skipWhitespace()
        if p < end && (p.pointee == UInt8(ascii: "{") || p.pointee == UInt8(ascii: "[")) { startKeyCache() }
        guard parseValues() else { return false }
        skipWhitespace()
        if p < end { return fail(.trailing(p.pointee), at: p) }
        return true
    }

    /// Parses one complete value (with everything nested in it) and leaves it on the stack.
    /// `p` is at the value's first byte (whitespace skipped).
    ///
    /// One function on purpose (issue 34): it is the decoder's hot loop, run once per value
    /// and per separator of the document. Splitting the dispatch on a value's first byte from
    /// the container bookkeeping after it would add a call per value that the optimiser does
    /// not always inline.
    mutating func parseValues() -> Bool {
        var depth = 0
        nextValue: while true {
            guard p < end else { return fail(.unexpectedEnd("a value"), at: p) }
            switch p.pointee {
            case UInt8(ascii: "\""):
                p += 1
                guard parseString(key: false) else { return false }
            case UInt8(ascii: "{"):
                guard openContainer(depth: &depth, isArray: false) else { return false }
                skipWhitespace()
                if p < end && p.pointee == UInt8(ascii: "}") {
                    p += 1
                    closeContainer(frames.unsafelyUnwrapped + (depth - 1))
                    depth -= 1
                } else {
                    guard parseKey() else { return false }
                    continue nextValue
                }
            case UInt8(ascii: "["):
                guard openContainer(depth: &depth, isArray: true) else { return false }
                skipWhitespace()
                if p < end && p.pointee == UInt8(ascii: "]") {
                    p += 1
                    closeContainer(frames.unsafelyUnwrapped + (depth - 1))
                    depth -= 1
                } else {
                    continue nextValue
                }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard parseNumber() else { return false }
            case UInt8(ascii: "t"):
                guard literal(0x6575_7274, "true") else { return false }    // "true", little-endian
                lua_pushboolean(L, 1)
            case UInt8(ascii: "f"):
                guard end - p >= 5, p[4] == UInt8(ascii: "e"), literal(0x736C_6166, "false") else {
                    return fail(.invalidLiteral("false"), at: p)
                }
                p += 1
                lua_pushboolean(L, 0)
            case UInt8(ascii: "n"):
                guard literal(0x6C6C_756E, "null") else { return false }
                lua_pushvalue(L, nullIndex)
            default:
                return fail(.unexpected(p.pointee, "a value"), at: p)
            }

            // A value is complete on top of the stack: it completes an item of its container.
            // Then go on with the container's next item, or close it (which completes another).
            while depth > 0 {
                let frame = frames.unsafelyUnwrapped + (depth - 1)
                if frame.pointee.direct {
                    if frame.pointee.isArray {
                        lua_rawseti(L, frame.pointee.base, lua_Integer(frame.pointee.count + 1))
                    } else {
                        lua_rawset(L, frame.pointee.base)
                    }
                }
                frame.pointee.count += 1
                if !frame.pointee.direct && frame.pointee.count >= Self.pendingLimit { makeTable(frame) }
                // Room for the next item: a key, a value, and a table being made and filled. The
                // top is known from the frame: its table, or its last piled item.
                let top = frame.pointee.direct ? frame.pointee.base
                    : frame.pointee.base + Int32(truncatingIfNeeded: frame.pointee.isArray ? frame.pointee.count : 2 * frame.pointee.count) - 1
                if top + 4 > stackLimit && !reserveStack(above: top) {
                    if !frame.pointee.direct { makeTable(frame) }
                    guard lua_checkstack(L, 4) != 0 else { return fail(.luaStackExhausted, at: p) }
                    stackLimit = lua_gettop(L) + 4
                }
                skipWhitespace()
                guard p < end else {
                    return fail(.unexpectedEnd(frame.pointee.isArray ? "',' or ']'" : "',' or '}'"), at: p)
                }
                let c = p.pointee
                p += 1
                if c == UInt8(ascii: ",") {
                    skipWhitespace()
                    if !frame.pointee.isArray {
                        guard parseKey() else { return false }
                    }
                    continue nextValue
                }
                if c != (frame.pointee.isArray ? UInt8(ascii: "]") : UInt8(ascii: "}")) {
                    return fail(.unexpected(c, frame.pointee.isArray ? "',' or ']'" : "',' or '}'"), at: p - 1)
                }
                closeContainer(frame)
                depth -= 1
            }
            return true
        }
    }

    /// At '{' or '[': records the new container (its table comes later).
    @inline(__always)
    mutating func openContainer(depth: inout Int, isArray: Bool) -> Bool {
        if depth >= maxDepth { return fail(.tooDeep(maxDepth), at: p) }
        // Room for its first item (a key and a value) and for making its table.
        let top = lua_gettop(L)
        if top + 4 > stackLimit && !reserveStack(above: top) {
            guard lua_checkstack(L, 4) != 0 else { return fail(.luaStackExhausted, at: p) }
            stackLimit = top + 4
        }
        if depth == frameCapacity { growStorage(&frames, &frameCapacity, minimum: 32, "the JSON codec") }
        let frame = frames.unsafelyUnwrapped + depth
        var hint = 0
        if depth < framesInitialised { hint = frame.pointee.lastObjectSize } else { framesInitialised = depth + 1 }
        frame.pointee = JSONFrame(base: top + 1, count: 0, isArray: isArray, direct: false, lastObjectSize: hint)
        if !isArray && hint > 0 && hint <= Self.objectHintLimit {
            lua_createtable(L, 0, Int32(truncatingIfNeeded: hint))
            frame.pointee.direct = true
        }
        depth += 1
        p += 1
        return true
    }

    /// Asks Lua for room well beyond what the next step needs, so that most steps need not ask:
    /// `top` is the stack's top now. False if Lua has not that much (then ask for less).
    @inline(never)
    mutating func reserveStack(above top: Int32) -> Bool {
        guard lua_checkstack(L, Self.stackReserve) != 0 else { return false }
        stackLimit = top + Self.stackReserve
        return true
    }

    /// At ']' or '}': leaves the container's table at its base, the top of the stack.
    @inline(__always)
    mutating func closeContainer(_ frame: UnsafeMutablePointer<JSONFrame>) {
        if !frame.pointee.direct { makeTable(frame, size: frame.pointee.count) }
        if !frame.pointee.isArray { frame.pointee.lastObjectSize = frame.pointee.count }
    }

    /// Makes the table for the items piled up from the frame's base, moves them into it, and
    /// leaves it at the base: from now on items go directly into it.
    mutating func makeTable(_ frame: UnsafeMutablePointer<JSONFrame>, size: Int? = nil) {
        let base = frame.pointee.base
        let n = frame.pointee.count
        let hint = Int32(clamping: size ?? 2 * n)
        if frame.pointee.isArray {
            lua_createtable(L, hint, 0)
            lua_pushvalue(L, arrayMetatableIndex)
            lua_setmetatable(L, -2)
        } else {
            lua_createtable(L, 0, hint)
        }
        if n > 0 {
            lua_rotate(L, base, 1)
            if frame.pointee.isArray {
                var i = lua_Integer(n)
                while i > 0 {
                    lua_rawseti(L, base, i)
                    i -= 1
                }
            } else {
                // In document order, so that of two equal keys the last one wins.
                var k = base + 1
                for _ in 0..<n {
                    lua_pushvalue(L, k)
                    lua_pushvalue(L, k + 1)
                    lua_rawset(L, base)
                    k += 2
                }
                lua_settop(L, base)
            }
        }
        frame.pointee.direct = true
    }

    /// At an object member: `"key"` whitespace `:` whitespace. Pushes the key.
    @inline(__always)
    mutating func parseKey() -> Bool {
        guard p < end else { return fail(.unexpectedEnd("a string key"), at: p) }
        guard p.pointee == UInt8(ascii: "\"") else { return fail(.unexpected(p.pointee, "a string key"), at: p) }
        p += 1
        guard parseString(key: true) else { return false }
        skipWhitespace()
        guard p < end else { return fail(.unexpectedEnd("':'"), at: p) }
        guard p.pointee == UInt8(ascii: ":") else { return fail(.unexpected(p.pointee, "':'"), at: p) }
        p += 1
        skipWhitespace()
        return true
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while p < end {
            let c = p.pointee
            if c > 0x20 { return }
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            p += 1
        }
    }

    /// `word` (4 bytes, read as a little-endian integer) at p; advances 4 bytes.
    @inline(__always)
    mutating func literal(_ word: UInt32, _ name: String) -> Bool {
        guard end - p >= 4, UnsafeRawPointer(p).loadUnaligned(as: UInt32.self) == UInt32(littleEndian: word) else {
            return fail(.invalidLiteral(name), at: p)
        }
        p += 4
        return true
    }
}
