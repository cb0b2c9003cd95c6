import CLunet
import LunetLuaStack
import Glibc
import LunetCore

/// JSON text (RFC 8259, UTF-8) decoded straight onto a Lua stack: no Swift value tree, no Swift
/// strings, no allocation per value. Keys and strings are pushed with `lua_pushlstring` from the
/// input itself; only a string with escapes goes through a scratch buffer reused for the whole
/// document.
///
/// The mapping (docs/json.md has the full rules):
/// - object → plain table; array → table with the `json.array` metatable; null → `json.null`;
/// - a number without fraction or exponent that fits in 64 bits → Lua integer; any other number
///   → float; a number whose magnitude overflows a double → error;
/// - `\u` escapes → UTF-8; a surrogate pair → one code point; a lone surrogate → error;
/// - invalid UTF-8 anywhere → error; a UTF-8 byte order mark at the very start is skipped;
/// - more than `maxDepth` nested arrays/objects → error (the parser is iterative: the limit,
///   not the C stack, is what stops deep input); anything after the value but whitespace → error.
///
/// Never raises: every Lua call it makes is a push or a raw table access.
public enum LuaJSONDecoder {
    public static let defaultMaxDepth = 1000

    /// Decodes `bytes` and pushes the value (returns 1), or pushes a `decode` error object with
    /// `message`, `position` (1-based byte offset), `line` and `column` (returns LUNET_RAISE).
    /// Either way the stack ends exactly one value above where it was.
    public static func decode(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer, maxDepth: Int = 1000) -> Int32 {
        let base = lua_gettop(L)
        guard lua_checkstack(L, 8) != 0 else {
            pushError(L, bytes, offset: 0, .luaStackExhausted)
            return LUNET_RAISE
        }
        // Slots base+1 and base+2 hold json.null and the array metatable while parsing.
        JSONRegistry.pushNull(L)
        JSONRegistry.pushArrayMetatable(L)

        let count = bytes.count
        guard count > 0, let raw = bytes.baseAddress else {
            lua_settop(L, base)
            pushError(L, bytes, offset: 0, .emptyInput)
            return LUNET_RAISE
        }
        let start = raw.assumingMemoryBound(to: UInt8.self)
        var parser = JSONParser(L: L, start: start, end: start + count, nullIndex: base + 1,
                                arrayMetatableIndex: base + 2, maxDepth: max(1, maxDepth))
        let ok = parser.parseDocument()
        let failure = parser.failure
        let failureOffset = parser.failureOffset
        parser.release()
        if ok {
            lunet_replace(L, base + 1)
            lua_settop(L, base + 1)
            return 1
        }
        lua_settop(L, base)
        pushError(L, bytes, offset: failureOffset, failure)
        return LUNET_RAISE
    }

    /// What went wrong, named for the message.
    enum Problem {
        case none
        case emptyInput
        case unexpectedEnd(String)
        case unexpected(UInt8, String)
        case trailing(UInt8)
        case controlInString(UInt8)
        case invalidEscape(UInt8)
        case invalidUnicodeEscape
        case loneSurrogate(UInt32)
        case invalidUTF8(UInt8)
        case leadingZero
        case expectedDigit(String)
        case numberOutOfRange
        case tooDeep(Int)
        case luaStackExhausted
        case invalidLiteral(String)

        var text: String {
            switch self {
            case .none: return "no error"
            case .emptyInput: return "empty input (expected a JSON value)"
            case .unexpectedEnd(let expecting): return "unexpected end of input (expected \(expecting))"
            case .unexpected(let c, let expecting): return "unexpected \(describe(c)) (expected \(expecting))"
            case .trailing(let c): return "unexpected \(describe(c)) after the JSON value"
            case .controlInString(let c): return "unescaped control character \(hex(c)) in string"
            case .invalidEscape(let c): return "invalid escape \(c >= 0x21 && c < 0x7F ? "'\\\(Character(Unicode.Scalar(c)))'" : "'\\' followed by \(describe(c))") in string"
            case .invalidUnicodeEscape: return "invalid \\u escape (expected 4 hexadecimal digits)"
            case .loneSurrogate(let u): return "lone UTF-16 surrogate \\u\(hex4(u)) in string (a surrogate must be part of a high/low pair)"
            case .invalidUTF8(let c): return "invalid UTF-8 (byte \(hex(c)))"
            case .leadingZero: return "leading zero in number"
            case .expectedDigit(let what): return "expected a digit \(what)"
            case .numberOutOfRange: return "number out of range for a double"
            case .tooDeep(let n): return "nesting too deep (more than \(n) levels of arrays and objects)"
            case .luaStackExhausted: return "nesting too deep for the Lua stack"
            case .invalidLiteral(let word): return "invalid literal (expected '\(word)')"
            }
        }

        private func describe(_ c: UInt8) -> String {
            if c >= 0x21 && c < 0x7F { return "character '\(Character(Unicode.Scalar(c)))'" }
            if c == 0x20 { return "space" }
            return "byte \(hex(c))"
        }
        private func hex(_ c: UInt8) -> String {
            let digits = Array("0123456789ABCDEF")
            return "0x" + String(digits[Int(c >> 4)]) + String(digits[Int(c & 15)])
        }
        private func hex4(_ u: UInt32) -> String {
            let digits = Array("0123456789ABCDEF")
            return String((0..<4).map { digits[Int((u >> (12 - 4 * UInt32($0))) & 15)] })
        }
    }

    /// Pushes the decode error object: "JSON: <problem> at line L, column C (byte B)".
    static func pushError(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer, offset: Int, _ problem: Problem) {
        // Line and column are counted only now, on failure: the parser never tracks them.
        var line = 1
        var column = 1
        let limit = min(offset, bytes.count)
        for i in 0..<limit {
            let b = bytes[i]
            if b == 0x0A {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1     // a character starts here (UTF-8 continuation bytes do not count)
            }
        }
        let position = offset + 1
        LuaErrorObject.push(L, .decode, "JSON: \(problem.text) at line \(line), column \(column) (byte \(position))")
        let s = LuaStack(L)
        s.set(-1, "position", position)
        s.set(-1, "line", line)
        s.set(-1, "column", column)
    }
}

// MARK: - The parser

/// Eight bytes at a time.
enum JSONScan {
    /// The high bit of each byte of `w` (in little-endian order: first byte lowest) that is '"', '\\', a control
    /// character or non-ASCII; zero when there is none. The lowest bit set is exact (higher ones
    /// may be false alarms), so `trailingZeroBitCount / 8` counts the plain bytes before the
    /// first special one.
    @inline(__always)
    static func specialBytes(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = w ^ (ones &* 0x22)
        let backslash = w ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote
        let hasBackslash = (backslash &- ones) & ~backslash
        let hasControl = (w &- ones &* 0x20) & ~w
        return (hasQuote | hasBackslash | hasControl | w) & highs
    }
}

/// An open array or object.
///
/// Its items (values, or key/value pairs) first pile up on the Lua stack from `base`; when it
/// closes, its table is made with the exact size (`lua_createtable(n, 0)` or `(0, n)`) and
/// filled, so small tables never rehash. A container with more than `JSONParser.pendingLimit`
/// items gets its table at once (sized for twice what it has) and takes the rest directly.
struct JSONFrame {
    var base: Int32             // stack index of its first item, and of its table once made
    var count: Int              // items so far
    var isArray: Bool
    var direct: Bool            // the table exists (at `base`) and items go straight into it
}

/// An iterative parser: open containers live on the Lua stack and in `frames`, so nesting
/// depth costs heap and Lua stack (checked with lua_checkstack), never C stack.
struct JSONParser {
    static let pendingLimit = 256

    let L: OpaquePointer
    let start: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>
    var p: UnsafePointer<UInt8>
    let nullIndex: Int32
    let arrayMetatableIndex: Int32
    let maxDepth: Int

    var frames: UnsafeMutablePointer<JSONFrame>? = nil
    var frameCapacity = 0
    /// Decoded bytes of the string being unescaped, and NUL-terminated number text.
    var scratch: UnsafeMutablePointer<UInt8>? = nil
    var scratchCapacity = 0

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
        free(scratch)
        frames = nil
        scratch = nil
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
        guard parseValues() else { return false }
        skipWhitespace()
        if p < end { return fail(.trailing(p.pointee), at: p) }
        return true
    }

    /// Parses one complete value (with everything nested in it) and leaves it on the stack.
    /// `p` is at the value's first byte (whitespace skipped).
    mutating func parseValues() -> Bool {
        var depth = 0
        nextValue: while true {
            guard p < end else { return fail(.unexpectedEnd("a value"), at: p) }
            switch p.pointee {
            case UInt8(ascii: "\""):
                p += 1
                guard parseString() else { return false }
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
                // Room for the next item: a key, a value, and a table being made and filled.
                if lua_checkstack(L, 4) == 0 {
                    if !frame.pointee.direct { makeTable(frame) }
                    guard lua_checkstack(L, 4) != 0 else { return fail(.luaStackExhausted, at: p) }
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
        guard lua_checkstack(L, 4) != 0 else { return fail(.luaStackExhausted, at: p) }
        if depth == frameCapacity { growFrames() }
        frames.unsafelyUnwrapped[depth] = JSONFrame(base: lua_gettop(L) + 1, count: 0, isArray: isArray, direct: false)
        depth += 1
        p += 1
        return true
    }

    /// At ']' or '}': leaves the container's table at its base, the top of the stack.
    @inline(__always)
    mutating func closeContainer(_ frame: UnsafeMutablePointer<JSONFrame>) {
        if !frame.pointee.direct { makeTable(frame, size: frame.pointee.count) }
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

    @inline(never)
    mutating func growFrames() {
        let capacity = max(32, frameCapacity * 2)
        guard let grown = realloc(frames, capacity * MemoryLayout<JSONFrame>.stride) else { jsonCodecOutOfMemory() }
        frames = grown.assumingMemoryBound(to: JSONFrame.self)
        frameCapacity = capacity
    }

    /// At an object member: `"key"` whitespace `:` whitespace. Pushes the key.
    @inline(__always)
    mutating func parseKey() -> Bool {
        guard p < end else { return fail(.unexpectedEnd("a string key"), at: p) }
        guard p.pointee == UInt8(ascii: "\"") else { return fail(.unexpected(p.pointee, "a string key"), at: p) }
        p += 1
        guard parseString() else { return false }
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

    // MARK: strings

    /// After the opening quote: pushes the string and moves past the closing quote.
    @inline(__always)
    mutating func parseString() -> Bool {
        let s = p
        while true {
            while end - p >= 8 {
                let special = JSONScan.specialBytes(UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)))
                if special != 0 {
                    p += special.trailingZeroBitCount >> 3
                    break
                }
                p += 8
            }
            guard p < end else { return fail(.unexpectedEnd("'\"' to close the string"), at: p) }
            let c = p.pointee
            if c == UInt8(ascii: "\"") {
                lua_pushlstring(L, UnsafeRawPointer(s).assumingMemoryBound(to: CChar.self), p - s)
                p += 1
                return true
            }
            if c < 0x80 {
                if c == UInt8(ascii: "\\") { return parseEscapedString(from: s) }
                if c < 0x20 { return fail(.controlInString(c), at: p) }
                p += 1
            } else {
                guard skipUTF8Sequence() else { return false }
            }
        }
    }

    /// At a byte >= 0x80: checks one well-formed UTF-8 sequence (RFC 3629: no overlong forms, no
    /// surrogates, nothing above U+10FFFF) and moves past it.
    @inline(__always)
    mutating func skipUTF8Sequence() -> Bool {
        let c = p.pointee
        let left = end - p
        @inline(__always) func isContinuation(_ b: UInt8) -> Bool { b & 0xC0 == 0x80 }
        switch c {
        case 0xC2...0xDF:
            guard left >= 2, isContinuation(p[1]) else { return failUTF8() }
            p += 2
        case 0xE0...0xEF:
            guard left >= 3 else { return failUTF8() }
            let b1 = p[1]
            let lo: UInt8 = c == 0xE0 ? 0xA0 : 0x80      // overlong
            let hi: UInt8 = c == 0xED ? 0x9F : 0xBF      // surrogates
            guard b1 >= lo && b1 <= hi, isContinuation(p[2]) else { return failUTF8() }
            p += 3
        case 0xF0...0xF4:
            guard left >= 4 else { return failUTF8() }
            let b1 = p[1]
            let lo: UInt8 = c == 0xF0 ? 0x90 : 0x80      // overlong
            let hi: UInt8 = c == 0xF4 ? 0x8F : 0xBF      // above U+10FFFF
            guard b1 >= lo && b1 <= hi, isContinuation(p[2]), isContinuation(p[3]) else { return failUTF8() }
            p += 4
        default:
            return failUTF8()
        }
        return true
    }

    /// Names the first byte that makes the sequence at p invalid.
    @inline(never)
    mutating func failUTF8() -> Bool {
        let c = p.pointee
        var bad = p
        let need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1
        if c >= 0xC2 && c <= 0xF4 {
            var i = 1
            while i < need && p + i < end && p[i] & 0xC0 == 0x80 && !(i == 1 && (
                (c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F) ||
                (c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] > 0x8F))) {
                i += 1
            }
            if i < need {
                if p + i >= end { return fail(.unexpectedEnd("the rest of a UTF-8 sequence"), at: p + i) }
                bad = p + i
            }
        }
        return fail(.invalidUTF8(bad.pointee), at: bad)
    }

    @inline(__always)
    mutating func reserveScratch(_ used: Int, _ extra: Int) {
        if used + extra > scratchCapacity { growScratch(used + extra) }
    }

    @inline(never)
    mutating func growScratch(_ needed: Int) {
        let capacity = max(needed, scratchCapacity * 2, 256)
        guard let grown = realloc(scratch, capacity) else { jsonCodecOutOfMemory() }
        scratch = grown.assumingMemoryBound(to: UInt8.self)
        scratchCapacity = capacity
    }

    /// The string from `s` has an escape at p: decode it into the scratch buffer, then push.
    @inline(never)
    mutating func parseEscapedString(from s: UnsafePointer<UInt8>) -> Bool {
        var n = p - s
        reserveScratch(0, n + 64)
        scratch.unsafelyUnwrapped.update(from: s, count: n)
        while true {
            // Room for one step: up to eight plain bytes, then one escape (at most 4 bytes of
            // UTF-8) or one UTF-8 sequence.
            if n + 16 > scratchCapacity { growScratch(n + 16) }
            var out = scratch.unsafelyUnwrapped + n
            if end - p >= 8 {
                // Copy eight bytes; keep those before the first special one.
                let w = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
                UnsafeMutableRawPointer(out).storeBytes(of: w, as: UInt64.self)
                let special = JSONScan.specialBytes(UInt64(littleEndian: w))
                if special == 0 {
                    p += 8
                    n += 8
                    continue
                }
                let plain = special.trailingZeroBitCount >> 3
                p += plain
                n += plain
                out += plain
            }
            guard p < end else { return fail(.unexpectedEnd("'\"' to close the string"), at: p) }
            let c = p.pointee
            if c >= 0x80 {
                let sequence = p
                guard skipUTF8Sequence() else { return false }
                for i in 0..<(p - sequence) { out[i] = sequence[i] }
                n += p - sequence
                continue
            }
            if c >= 0x20 && c != UInt8(ascii: "\"") && c != UInt8(ascii: "\\") {
                out.pointee = c
                p += 1
                n += 1
                continue
            }
            if c == UInt8(ascii: "\"") {
                lua_pushlstring(L, UnsafeRawPointer(scratch.unsafelyUnwrapped).assumingMemoryBound(to: CChar.self), n)
                p += 1
                return true
            }
            if c < 0x20 { return fail(.controlInString(c), at: p) }
            // A backslash.
            guard end - p >= 2 else { return fail(.unexpectedEnd("an escape"), at: p + 1) }
            let e = p[1]
            p += 2
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.pointee = e
            case UInt8(ascii: "b"): out.pointee = 0x08
            case UInt8(ascii: "f"): out.pointee = 0x0C
            case UInt8(ascii: "n"): out.pointee = 0x0A
            case UInt8(ascii: "r"): out.pointee = 0x0D
            case UInt8(ascii: "t"): out.pointee = 0x09
            case UInt8(ascii: "u"):
                guard let scalar = unicodeEscape() else { return false }
                n += writeUTF8(scalar, to: out)
                continue
            default:
                return fail(.invalidEscape(e), at: p - 1)
            }
            n += 1
        }
    }

    /// After "\u": the code point of this escape, joined with a following low-surrogate escape.
    mutating func unicodeEscape() -> UInt32? {
        let escapeStart = p - 2
        guard let u = hex4() else { return nil }
        if u < 0xD800 || u > 0xDFFF { return u }
        if u >= 0xDC00 {
            _ = fail(.loneSurrogate(u), at: escapeStart)
            return nil
        }
        // A high surrogate: a low one must follow at once.
        guard end - p >= 6, p[0] == UInt8(ascii: "\\"), p[1] == UInt8(ascii: "u") else {
            _ = fail(.loneSurrogate(u), at: escapeStart)
            return nil
        }
        let save = p
        p += 2
        guard let low = hex4() else { return nil }
        guard low >= 0xDC00 && low <= 0xDFFF else {
            p = save
            _ = fail(.loneSurrogate(u), at: escapeStart)
            return nil
        }
        return 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00)
    }

    mutating func hex4() -> UInt32? {
        guard end - p >= 4 else {
            _ = fail(.invalidUnicodeEscape, at: p)
            return nil
        }
        var v: UInt32 = 0
        for i in 0..<4 {
            let c = p[i]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default:
                _ = fail(.invalidUnicodeEscape, at: p + i)
                return nil
            }
            v = v << 4 | d
        }
        p += 4
        return v
    }

    @inline(__always)
    func writeUTF8(_ u: UInt32, to out: UnsafeMutablePointer<UInt8>) -> Int {
        if u < 0x80 {
            out[0] = UInt8(u)
            return 1
        }
        if u < 0x800 {
            out[0] = UInt8(0xC0 | (u >> 6))
            out[1] = UInt8(0x80 | (u & 0x3F))
            return 2
        }
        if u < 0x10000 {
            out[0] = UInt8(0xE0 | (u >> 12))
            out[1] = UInt8(0x80 | ((u >> 6) & 0x3F))
            out[2] = UInt8(0x80 | (u & 0x3F))
            return 3
        }
        out[0] = UInt8(0xF0 | (u >> 18))
        out[1] = UInt8(0x80 | ((u >> 12) & 0x3F))
        out[2] = UInt8(0x80 | ((u >> 6) & 0x3F))
        out[3] = UInt8(0x80 | (u & 0x3F))
        return 4
    }

    // MARK: numbers

    @inline(__always)
    static func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }

    /// At '-' or a digit. Integers that fit in 64 bits become Lua integers; everything else is
    /// a float: exact by multiplication when both parts are exact doubles, else by Lua's own
    /// conversion (strtod, with the locale's decimal point handled).
    @inline(__always)
    mutating func parseNumber() -> Bool {
        let s = p
        var negative = false
        if p.pointee == UInt8(ascii: "-") {
            negative = true
            p += 1
            guard p < end else { return fail(.unexpectedEnd("a digit"), at: p) }
        }
        var mantissa: UInt64 = 0
        var digits = 0              // significant digits in `mantissa`
        var c = p.pointee
        if c == UInt8(ascii: "0") {
            p += 1
            if p < end && Self.isDigit(p.pointee) { return fail(.leadingZero, at: p - 1) }
        } else if Self.isDigit(c) {
            repeat {
                mantissa = mantissa &* 10 &+ UInt64(c &- UInt8(ascii: "0"))
                digits += 1
                p += 1
                guard p < end else { break }
                c = p.pointee
            } while Self.isDigit(c)
        } else {
            return fail(.unexpected(c, "a digit after '-'"), at: p)
        }
        guard p < end, (p.pointee == UInt8(ascii: ".") || p.pointee | 0x20 == UInt8(ascii: "e")) else {
            // An integer.
            if digits <= 18 {
                let v = Int64(bitPattern: mantissa)
                lua_pushinteger(L, negative ? -v : v)
                return true
            }
            if digits == 19 {
                if !negative && mantissa <= UInt64(Int64.max) {
                    lua_pushinteger(L, Int64(mantissa))
                    return true
                }
                if negative && mantissa <= UInt64(Int64.max) + 1 {
                    lua_pushinteger(L, Int64(bitPattern: 0 &- mantissa))
                    return true
                }
            }
            return convertNumber(from: s)
        }
        var exponent = 0
        if p.pointee == UInt8(ascii: ".") {
            p += 1
            guard p < end else { return fail(.unexpectedEnd("a digit after '.'"), at: p) }
            c = p.pointee
            guard Self.isDigit(c) else { return fail(.unexpected(c, "a digit after '.'"), at: p) }
            repeat {
                let d = UInt64(c &- UInt8(ascii: "0"))
                if mantissa != 0 || d != 0 {
                    mantissa = mantissa &* 10 &+ d
                    digits += 1
                }
                exponent -= 1
                p += 1
                guard p < end else { break }
                c = p.pointee
            } while Self.isDigit(c)
        }
        if p < end && p.pointee | 0x20 == UInt8(ascii: "e") {
            p += 1
            var negativeExponent = false
            if p < end && (p.pointee == UInt8(ascii: "+") || p.pointee == UInt8(ascii: "-")) {
                negativeExponent = p.pointee == UInt8(ascii: "-")
                p += 1
            }
            guard p < end else { return fail(.unexpectedEnd("a digit in the exponent"), at: p) }
            c = p.pointee
            guard Self.isDigit(c) else { return fail(.unexpected(c, "a digit in the exponent"), at: p) }
            var e = 0
            repeat {
                if e < 1_000_000 { e = e * 10 + Int(c &- UInt8(ascii: "0")) }
                p += 1
                guard p < end else { break }
                c = p.pointee
            } while Self.isDigit(c)
            exponent += negativeExponent ? -e : e
        }
        // Clinger's fast path: a mantissa below 2^53 and a power of ten up to 10^22 are both
        // exact doubles, so one multiplication or division rounds correctly.
        if digits <= 15 && exponent >= -22 && exponent <= 22 {
            var v = Double(mantissa)
            if exponent < 0 { v /= Self.powerOfTen(-exponent) } else if exponent > 0 { v *= Self.powerOfTen(exponent) }
            lua_pushnumber(L, negative ? -v : v)
            return true
        }
        #if arch(x86_64) || arch(i386)
        // The same one step in 80-bit extended precision, where any 19-digit mantissa and 10^27
        // are exact, then rounded to a double. That second rounding is right unless the
        // extended result lies within one of its units of a point halfway between two doubles
        // (its 11 low bits near 0x400): those few go to strtod. (The bounds keep the result far
        // from subnormals and overflow.)
        if digits <= 19 && exponent >= -27 && exponent <= 27 {
            let m = Float80(mantissa)
            let r = exponent < 0 ? m / Self.powerOfTen80(-exponent) : m * Self.powerOfTen80(exponent)
            let low = r.significandBitPattern & 0x7FF
            if low < 0x3FF || low > 0x401 {
                let v = Double(r)
                lua_pushnumber(L, negative ? -v : v)
                return true
            }
        }
        #endif
        return convertNumber(from: s)
    }

    @inline(__always)
    static func powerOfTen(_ e: Int) -> Double {
        switch e {
        case 0: return 1e0
        case 1: return 1e1
        case 2: return 1e2
        case 3: return 1e3
        case 4: return 1e4
        case 5: return 1e5
        case 6: return 1e6
        case 7: return 1e7
        case 8: return 1e8
        case 9: return 1e9
        case 10: return 1e10
        case 11: return 1e11
        case 12: return 1e12
        case 13: return 1e13
        case 14: return 1e14
        case 15: return 1e15
        case 16: return 1e16
        case 17: return 1e17
        case 18: return 1e18
        case 19: return 1e19
        case 20: return 1e20
        case 21: return 1e21
        default: return 1e22
        }
    }

    #if arch(x86_64) || arch(i386)
    @inline(__always)
    static func powerOfTen80(_ e: Int) -> Float80 {
        switch e {
        case 0: return 1e0
        case 1: return 1e1
        case 2: return 1e2
        case 3: return 1e3
        case 4: return 1e4
        case 5: return 1e5
        case 6: return 1e6
        case 7: return 1e7
        case 8: return 1e8
        case 9: return 1e9
        case 10: return 1e10
        case 11: return 1e11
        case 12: return 1e12
        case 13: return 1e13
        case 14: return 1e14
        case 15: return 1e15
        case 16: return 1e16
        case 17: return 1e17
        case 18: return 1e18
        case 19: return 1e19
        case 20: return 1e20
        case 21: return 1e21
        case 22: return 1e22
        case 23: return 1e23
        case 24: return 1e24
        case 25: return 1e25
        case 26: return 1e26
        default: return 1e27
        }
    }
    #endif

    /// The slow path: the token [s, p) (already checked against JSON's grammar) converted by
    /// lua_stringtonumber, which gives a float for integers beyond 64 bits.
    @inline(never)
    mutating func convertNumber(from s: UnsafePointer<UInt8>) -> Bool {
        let n = p - s
        reserveScratch(0, n + 1)
        let text = scratch.unsafelyUnwrapped
        text.update(from: s, count: n)
        text[n] = 0
        guard lua_stringtonumber(L, UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self)) == n + 1 else {
            return fail(.numberOutOfRange, at: s)
        }
        if lua_isinteger(L, -1) == 0 {
            let v = lua_tonumberx(L, -1, nil)
            if v.isInfinite || v.isNaN {
                lua_settop(L, -2)
                return fail(.numberOutOfRange, at: s)
            }
        }
        return true
    }
}

@inline(never)
func jsonCodecOutOfMemory() -> Never {
    let message: StaticString = "lunet: out of memory in the JSON codec; stopping\n"
    _ = write(2, message.utf8Start, message.utf8CodeUnitCount)
    abort()
}
