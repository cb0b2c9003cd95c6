import CLunet
import LunetLuaStack
import Glibc
import LunetCore

/// XML 1.0 (UTF-8) decoded straight onto a Lua stack: no Swift tree, no Swift strings. Names
/// and plain text are pushed with `lua_pushlstring` from the input itself; only text or values
/// with references, CR line ends or interleaved comments go through one scratch buffer reused
/// for the whole document.
///
/// The result is the root element as an element table (docs/xml.md has the full rules):
/// `{ tag = "soap:Envelope", ns = "http://…", attrs = { name = value, … }, children = { … } }`
/// - `tag` is the qualified name as written; `ns` is the URI its prefix (or the default
///   `xmlns`) is bound to, absent when there is none; `xmlns` attributes stay in `attrs`;
/// - `attrs` and `children` are always tables; children are element tables and strings, in
///   document order. Text, CDATA sections and references between two tags are one string
///   (comments and processing instructions in between are dropped and do not split it);
///   a string that is only whitespace written as such is dropped unless `keepWhitespace`;
/// - line ends are normalized (CR LF and CR → LF), and attribute values get XML's
///   normalization (literal tab, LF and CR → space);
/// - entities: the five predefined and character references; a DOCTYPE is skipped whole, its
///   declarations never read, so an entity it declares is an unknown entity (an error);
/// - the XML declaration, comments, processing instructions are skipped; a declared encoding
///   other than UTF-8 is an error unless `ignoreEncoding` (the bytes were converted already);
/// - every well-formedness error is a `decode` error naming the place. The parser is
///   iterative: depth is limited by `maxDepth` (default 1000), never by the C stack.
///
/// Never raises: every Lua call it makes is a push, a raw table access or lua_checkstack.
public enum LuaXMLDecoder {
    public static let defaultMaxDepth = 1000

    public struct Options: Sendable {
        /// Keep text that is only whitespace (indentation between elements).
        public var keepWhitespace = false
        /// Elements nested deeper than this are an error.
        public var maxDepth = LuaXMLDecoder.defaultMaxDepth
        /// Read the bytes as UTF-8 whatever the XML declaration says (they were converted).
        public var ignoreEncoding = false
        public init() {}
    }

    /// Decodes `bytes` and pushes the root element (returns 1), or pushes a `decode` error
    /// object with `message`, `position` (1-based byte offset), `line` and `column` (returns
    /// LUNET_RAISE). Either way the stack ends exactly one value above where it was.
    public static func decode(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer, options: Options = Options()) -> Int32 {
        let base = lua_gettop(L)
        guard lua_checkstack(L, 16) != 0 else {
            pushError(L, bytes, offset: 0, .luaStackExhausted)
            return LUNET_RAISE
        }
        guard bytes.count > 0, let raw = bytes.baseAddress else {
            pushError(L, bytes, offset: 0, .emptyInput)
            return LUNET_RAISE
        }
        // Fixed slots while parsing: the field names, the empty string (the default namespace's
        // key), the prefix → URI table in scope, the undo list of namespace declarations, and
        // the last namespace looked up.
        lua_pushlstring(L, "tag", 3)
        lua_pushlstring(L, "attrs", 5)
        lua_pushlstring(L, "children", 8)
        lua_pushlstring(L, "ns", 2)
        lua_pushlstring(L, "", 0)
        lua_createtable(L, 0, 4)
        lua_pushlstring(L, "xml", 3)
        lua_pushlstring(L, xmlNamespace, strlen(xmlNamespace))
        lua_rawset(L, -3)
        lua_createtable(L, 8, 0)
        lua_pushnil(L)

        let start = raw.assumingMemoryBound(to: UInt8.self)
        var parser = XMLParser(L: L, start: start, end: start + bytes.count, slots: base, options: options)
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

    static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"

    /// What went wrong, named for the message. Offsets point into the input; names and the
    /// text around them are read from it only when the message is made.
    enum Problem {
        case none
        case emptyInput
        case noRoot
        case unexpectedEnd(StaticString)
        case unexpected(StaticString)                    // the character at the failure offset
        case unclosed(name: Int, length: Int)            // offset of the name in the start tag
        case mismatched(found: Int, foundLength: Int, open: Int, openLength: Int)
        case unexpectedAttribute(StaticString, name: Int, length: Int)
        case duplicateAttribute(length: Int)
        case lessThanInAttribute
        case invalidUTF8
        case invalidCharacter(UInt32)
        case unknownEntity(length: Int, doctype: Bool)
        case bareAmpersand
        case malformedCharacterReference
        case invalidCharacterReference(length: Int, UInt32)
        case cdataEndInText
        case doubleHyphenInComment
        case tooDeep(Int)
        case luaStackExhausted
        case encoding(length: Int)
        case notASCII(name: Int, length: Int)
        case utf16(StaticString)
        case badDeclaration(StaticString)
        case declarationNotAtStart
        case doctypeMisplaced(StaticString)
        case cdataOutsideRoot
        case textOutsideRoot(after: Bool)
        case secondRoot(length: Int)

        func text(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> String {
            func name(_ at: Int, _ length: Int) -> String {
                let n = max(0, min(length, bytes.count - at, 80))
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[at..<(at + n)]), as: UTF8.self)
                return length > 80 ? text + "…" : text
            }
            func place(_ at: Int) -> String {
                let (line, column) = LuaXMLDecoder.lineColumn(bytes, at)
                return "line \(line), column \(column)"
            }
            let here = LuaXMLDecoder.describe(bytes, offset)
            switch self {
            case .none: return "no error"
            case .emptyInput: return "empty input (expected an XML document)"
            case .noRoot: return "no root element (the document ends before one)"
            case .unexpectedEnd(let expecting): return "unexpected end of input (expected \(expecting))"
            case .unexpected(let expecting): return "unexpected \(here) (expected \(expecting))"
            case .unclosed(let at, let length):
                return "unexpected end of input: <\(name(at, length))> (opened on \(place(at - 1))) is not closed"
            case .mismatched(let found, let foundLength, let open, let openLength):
                return "mismatched end tag </\(name(found, foundLength))>: expected </\(name(open, openLength))> to close <\(name(open, openLength))> opened on \(place(open - 1))"
            case .unexpectedAttribute(let expecting, let at, let length):
                return "unexpected \(here) (expected \(expecting) after attribute name '\(name(at, length))')"
            case .duplicateAttribute(let length): return "duplicate attribute '\(name(offset, length))'"
            case .lessThanInAttribute: return "'<' in an attribute value (write &lt;)"
            case .invalidUTF8: return "invalid UTF-8 (byte \(LuaXMLDecoder.hex(bytes[offset])))"
            case .invalidCharacter(let u): return "invalid character \(LuaXMLDecoder.codePoint(u)) (not allowed in XML)"
            case .unknownEntity(let length, let doctype):
                let why = doctype ? "entities declared in a DOCTYPE are not expanded"
                                  : "XML defines only &lt; &gt; &amp; &quot; &apos; and character references"
                return "unknown entity '\(name(offset, length))' (\(why))"
            case .bareAmpersand: return "'&' not followed by an entity or character reference (write &amp;)"
            case .malformedCharacterReference: return "malformed character reference (expected '&#' digits ';' or '&#x' hex digits ';')"
            case .invalidCharacterReference(let length, let u):
                let what = u > 0x10FFFF ? "beyond U+10FFFF" : "\(LuaXMLDecoder.codePoint(u)) is not allowed in XML"
                return "invalid character reference '\(name(offset, length))' (\(what))"
            case .cdataEndInText: return "']]>' in text (write ]]&gt;)"
            case .doubleHyphenInComment: return "'--' inside a comment"
            case .tooDeep(let n): return "nesting too deep (more than \(n) levels of elements)"
            case .luaStackExhausted: return "nesting too deep for the Lua stack"
            case .encoding(let length):
                return "the document declares encoding \"\(name(offset, length))\", but xml.decode reads UTF-8 only: convert the body to UTF-8 first (as r.text does) and decode it with { ignore_encoding = true }"
            case .notASCII(let at, let length):
                return "byte \(LuaXMLDecoder.hex(bytes[offset])) is not \(name(at, length)), the encoding the document declares: convert the body to UTF-8 first (as r.text does) and decode it with { ignore_encoding = true }"
            case .utf16(let how): return "the document is UTF-16 (\(how)): convert the body to UTF-8 first (as r.text does)"
            case .badDeclaration(let what): return "malformed XML declaration (\(what))"
            case .declarationNotAtStart: return "an XML declaration ('<?xml ...?>') is allowed only at the very start of the document"
            case .doctypeMisplaced(let what): return "DOCTYPE \(what)"
            case .cdataOutsideRoot: return "CDATA section outside the root element"
            case .textOutsideRoot(let after): return "text \(after ? "after" : "before") the root element (unexpected \(here))"
            case .secondRoot(let length):
                return "a second root element <\(name(offset + 1, length))> (a document has one root element)"
            }
        }
    }

    /// Line and column (1-based; columns count characters, not bytes) of a byte offset.
    static func lineColumn(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> (Int, Int) {
        var line = 1
        var column = 1
        for i in 0..<min(max(offset, 0), bytes.count) {
            let b = bytes[i]
            if b == 0x0A {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    /// The thing at `offset` for a message: "character 'x'", "space", "character 'é' (U+00E9)",
    /// "byte 0xFF", "end of input".
    static func describe(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> String {
        guard offset >= 0 && offset < bytes.count else { return "end of input" }
        let c = bytes[offset]
        if c >= 0x21 && c < 0x7F { return "character '\(Character(Unicode.Scalar(c)))'" }
        if c == 0x20 { return "space" }
        if c == 0x0A { return "line feed" }
        if c == 0x09 { return "tab" }
        if c == 0x0D { return "carriage return" }
        if c >= 0xC2 && c <= 0xF4 {
            let n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2
            if offset + n <= bytes.count {
                let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)])
                var iterator = slice.makeIterator()
                var decoder = UTF8()
                if case .scalarValue(let scalar) = decoder.decode(&iterator) {
                    return "character '\(Character(scalar))' (\(codePoint(scalar.value)))"
                }
            }
        }
        return "byte \(hex(c))"
    }

    static func hex(_ c: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x" + String(digits[Int(c >> 4)]) + String(digits[Int(c & 15)])
    }

    static func codePoint(_ u: UInt32) -> String {
        var digits = String(u, radix: 16, uppercase: true)
        while digits.count < 4 { digits = "0" + digits }
        return "U+" + digits
    }

    /// Pushes the decode error object: "XML: <problem> at line L, column C (byte B)".
    static func pushError(_ L: OpaquePointer, _ bytes: UnsafeRawBufferPointer, offset: Int, _ problem: Problem) {
        let (line, column) = lineColumn(bytes, offset)
        let position = offset + 1
        LuaErrorObject.push(L, .decode, "XML: \(problem.text(bytes, offset)) at line \(line), column \(column) (byte \(position))")
        let s = LuaStack(L)
        s.set(-1, "position", position)
        s.set(-1, "line", line)
        s.set(-1, "column", column)
    }
}

// MARK: - Bytes

/// Character classes of ASCII bytes, one digit per byte value: 1 name start, 2 name character,
/// 4 whitespace (bytes >= 0x80 are classified by XMLParser.nameCharacter).
let xmlByteClasses: StaticString = "0000000004400400000000000000000040000000000002202222222222300000033333333333333333333333333000030333333333333333333333333330000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"

enum XMLScan {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte equal to `c` (the lowest one set is exact).
    @inline(__always)
    static func equal(_ w: UInt64, _ c: UInt8) -> UInt64 {
        let v = w ^ (ones &* UInt64(c))
        return (v &- ones) & ~v & highs
    }

    /// The high bit of each byte below 0x20 or at least 0x80 (the lowest one set is exact).
    @inline(__always)
    static func controlOrHigh(_ w: UInt64) -> UInt64 {
        ((w &- ones &* 0x20) & ~w & highs) | (w & highs)
    }

    /// Text: '<', '&', ']', controls (CR, LF, tab included) and non-ASCII.
    @inline(__always)
    static func textSpecial(_ w: UInt64) -> UInt64 {
        equal(w, UInt8(ascii: "<")) | equal(w, UInt8(ascii: "&")) | equal(w, UInt8(ascii: "]")) | controlOrHigh(w)
    }

    /// An attribute value in `quote`: the quote, '<', '&', controls and non-ASCII.
    @inline(__always)
    static func valueSpecial(_ w: UInt64, _ quote: UInt8) -> UInt64 {
        equal(w, quote) | equal(w, UInt8(ascii: "<")) | equal(w, UInt8(ascii: "&")) | controlOrHigh(w)
    }

    /// CDATA content: ']', controls and non-ASCII.
    @inline(__always)
    static func cdataSpecial(_ w: UInt64) -> UInt64 {
        equal(w, UInt8(ascii: "]")) | controlOrHigh(w)
    }

    /// Whether a code point may appear in an XML 1.0 document.
    @inline(__always)
    static func isXMLChar(_ u: UInt32) -> Bool {
        if u < 0x20 { return u == 0x09 || u == 0x0A || u == 0x0D }
        if u < 0xD800 { return true }
        if u < 0xE000 { return false }
        if u < 0xFFFE { return true }
        return u >= 0x10000 && u <= 0x10FFFF
    }

    /// XML 1.0 (fifth edition) NameStartChar, beyond ASCII.
    static func isNameStart(_ u: UInt32) -> Bool {
        switch u {
        case 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x2FF, 0x370...0x37D, 0x37F...0x1FFF, 0x200C...0x200D,
             0x2070...0x218F, 0x2C00...0x2FEF, 0x3001...0xD7FF, 0xF900...0xFDCF, 0xFDF0...0xFFFD,
             0x10000...0xEFFFF:
            return true
        default:
            return false
        }
    }

    /// NameChar, beyond ASCII.
    static func isNameChar(_ u: UInt32) -> Bool {
        isNameStart(u) || u == 0xB7 || (u >= 0x300 && u <= 0x36F) || u == 0x203F || u == 0x2040
    }

    /// The code point of the well-formed UTF-8 sequence at `p` (RFC 3629) and its length, or
    /// length 0 when it is not one.
    @inline(__always)
    static func decodeUTF8(_ p: UnsafePointer<UInt8>, _ left: Int) -> (UInt32, Int) {
        let c = p[0]
        @inline(__always) func cont(_ b: UInt8) -> Bool { b & 0xC0 == 0x80 }
        switch c {
        case 0xC2...0xDF:
            guard left >= 2, cont(p[1]) else { return (0, 0) }
            return (UInt32(c & 0x1F) << 6 | UInt32(p[1] & 0x3F), 2)
        case 0xE0...0xEF:
            guard left >= 3 else { return (0, 0) }
            let lo: UInt8 = c == 0xE0 ? 0xA0 : 0x80
            let hi: UInt8 = c == 0xED ? 0x9F : 0xBF
            guard p[1] >= lo && p[1] <= hi, cont(p[2]) else { return (0, 0) }
            return (UInt32(c & 0x0F) << 12 | UInt32(p[1] & 0x3F) << 6 | UInt32(p[2] & 0x3F), 3)
        case 0xF0...0xF4:
            guard left >= 4 else { return (0, 0) }
            let lo: UInt8 = c == 0xF0 ? 0x90 : 0x80
            let hi: UInt8 = c == 0xF4 ? 0x8F : 0xBF
            guard p[1] >= lo && p[1] <= hi, cont(p[2]), cont(p[3]) else { return (0, 0) }
            return (UInt32(c & 0x07) << 18 | UInt32(p[1] & 0x3F) << 12 | UInt32(p[2] & 0x3F) << 6 | UInt32(p[3] & 0x3F), 4)
        default:
            return (0, 0)
        }
    }

    @inline(__always)
    static func writeUTF8(_ u: UInt32, to out: UnsafeMutablePointer<UInt8>) -> Int {
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
}

@inline(never)
func xmlCodecOutOfMemory() -> Never {
    let message: StaticString = "lunet: out of memory in the XML codec; stopping\n"
    _ = write(2, message.utf8Start, message.utf8CodeUnitCount)
    abort()
}

// MARK: - The parser

/// An open element. Its table is at `base`; its children wait on the stack above it until it
/// closes (or until there are `pendingLimit` of them: then its children table is made at
/// base + 1 and they go straight into it).
struct XMLFrame {
    var base: Int32
    var count: Int
    var direct: Bool
    var name: UnsafePointer<UInt8>
    var nameLength: Int
    var undoMark: Int
}

struct XMLParser {
    let L: OpaquePointer
    let start: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>
    var p: UnsafePointer<UInt8>
    let classes: UnsafePointer<UInt8>
    let keepWhitespace: Bool
    let maxDepth: Int
    let ignoreEncoding: Bool

    // Fixed stack slots.
    let tagKey: Int32
    let attrsKey: Int32
    let childrenKey: Int32
    let nsKey: Int32
    let emptyKey: Int32
    let scope: Int32
    let undo: Int32
    let cache: Int32

    var frames: UnsafeMutablePointer<XMLFrame>? = nil
    var frameCapacity = 0
    var depth = 0
    var undoCount = 0
    /// Changes whenever the namespace bindings do; the cache of the last lookup is valid while
    /// it has not changed.
    var generation = 0
    var cacheGeneration = -1
    var cachePrefix: UnsafePointer<UInt8>
    var cacheLength = 0
    var cacheBound = false

    var scratch: UnsafeMutablePointer<UInt8>? = nil
    var scratchCapacity = 0
    var scratchCount = 0

    /// The text run being gathered: a slice of the input while it is one, else the scratch.
    var runStart: UnsafePointer<UInt8>? = nil
    var runEnd: UnsafePointer<UInt8>? = nil
    var runInScratch = false
    var runContent = false

    var attrOffsets: UnsafeMutablePointer<Int>? = nil
    var attrCapacity = 0

    var sawDoctype = false
    var failure: LuaXMLDecoder.Problem = .none
    var failureOffset = 0

    static let pendingLimit = 256

    init(L: OpaquePointer, start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, slots base: Int32, options: LuaXMLDecoder.Options) {
        self.L = L
        self.start = start
        self.end = end
        self.p = start
        self.classes = UnsafeRawPointer(xmlByteClasses.utf8Start).assumingMemoryBound(to: UInt8.self)
        self.keepWhitespace = options.keepWhitespace
        self.maxDepth = max(1, options.maxDepth)
        self.ignoreEncoding = options.ignoreEncoding
        tagKey = base + 1
        attrsKey = base + 2
        childrenKey = base + 3
        nsKey = base + 4
        emptyKey = base + 5
        scope = base + 6
        undo = base + 7
        cache = base + 8
        cachePrefix = start
    }

    mutating func release() {
        free(frames)
        free(scratch)
        free(attrOffsets)
        frames = nil
        scratch = nil
        attrOffsets = nil
    }

    @inline(never)
    mutating func fail(_ problem: LuaXMLDecoder.Problem, at q: UnsafePointer<UInt8>) -> Bool {
        failure = problem
        failureOffset = q - start
        return false
    }

    /// "unexpected end of input" at the end, else "unexpected <thing here>".
    @inline(never)
    mutating func failHere(_ expecting: StaticString) -> Bool {
        if p >= end { return fail(.unexpectedEnd(expecting), at: end) }
        return fail(.unexpected(expecting), at: p)
    }

    // MARK: bytes

    @inline(__always)
    func byteClass(_ c: UInt8) -> UInt8 { classes[Int(c)] &- UInt8(ascii: "0") }

    @inline(__always)
    func at(_ s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        return end - p >= n && memcmp(p, s.utf8Start, n) == 0
    }

    /// Skips XML whitespace; returns whether there was any.
    @inline(__always)
    @discardableResult
    mutating func skipWhitespace() -> Bool {
        let s = p
        while p < end && byteClass(p.pointee) & 4 != 0 { p += 1 }
        return p > s
    }

    /// At a byte >= 0x80: one well-formed UTF-8 sequence of an XML character; moves past it.
    @inline(__always)
    mutating func skipNonASCII() -> Bool {
        let (u, n) = XMLScan.decodeUTF8(p, end - p)
        if n == 0 { return failUTF8() }
        if n == 3 && u >= 0xFFFE { return fail(.invalidCharacter(u), at: p) }
        p += n
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
        return fail(.invalidUTF8, at: bad)
    }

    /// One character of markup that is skipped (comments, PIs, DOCTYPE): checked, not kept.
    @inline(__always)
    mutating func skipCharacter() -> Bool {
        let c = p.pointee
        if c >= 0x80 { return skipNonASCII() }
        if c < 0x20 && byteClass(c) & 4 == 0 { return fail(.invalidCharacter(UInt32(c)), at: p) }
        p += 1
        return true
    }

    /// At what should be a Name: moves past it. Fails expecting `what` when there is none.
    @inline(__always)
    mutating func scanName(_ what: StaticString) -> Bool {
        guard p < end else { return fail(.unexpectedEnd(what), at: p) }
        let c = p.pointee
        if byteClass(c) & 1 != 0 {
            p += 1
        } else if c >= 0x80 {
            guard nameCharacter(first: true, what) else { return false }
        } else {
            return fail(.unexpected(what), at: p)
        }
        while p < end {
            let c = p.pointee
            if byteClass(c) & 2 != 0 {
                p += 1
            } else if c >= 0x80 {
                let save = p
                guard nameCharacter(first: false, what) else {
                    // Not a name character: the name ends here (unless the bytes are bad).
                    if case .invalidUTF8 = failure { return false }
                    if case .unexpectedEnd = failure { return false }
                    failure = .none
                    p = save
                    return true
                }
            } else {
                break
            }
        }
        return true
    }

    /// At a byte >= 0x80 in a name: moves past it if it is a name character.
    @inline(never)
    mutating func nameCharacter(first: Bool, _ what: StaticString) -> Bool {
        let (u, n) = XMLScan.decodeUTF8(p, end - p)
        if n == 0 { return failUTF8() }
        guard first ? XMLScan.isNameStart(u) : XMLScan.isNameChar(u) else { return fail(.unexpected(what), at: p) }
        p += n
        return true
    }

    // MARK: scratch and text runs

    @inline(__always)
    mutating func reserveScratch(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
        if scratchCount + extra > scratchCapacity { growScratch(scratchCount + extra) }
        return scratch.unsafelyUnwrapped + scratchCount
    }

    @inline(never)
    mutating func growScratch(_ needed: Int) {
        let capacity = max(needed, scratchCapacity * 2, 256)
        guard let grown = realloc(scratch, capacity) else { xmlCodecOutOfMemory() }
        scratch = grown.assumingMemoryBound(to: UInt8.self)
        scratchCapacity = capacity
    }

    @inline(__always)
    mutating func scratchAppend(_ s: UnsafePointer<UInt8>, _ n: Int) {
        guard n > 0 else { return }
        reserveScratch(n).update(from: s, count: n)
        scratchCount += n
    }

    @inline(__always)
    mutating func scratchAppend(scalar u: UInt32) {
        scratchCount += XMLScan.writeUTF8(u, to: reserveScratch(4))
    }

    /// Adds the input bytes [s, e) to the text run.
    @inline(__always)
    mutating func appendRun(_ s: UnsafePointer<UInt8>, _ e: UnsafePointer<UInt8>) {
        guard e > s else { return }
        if !runInScratch {
            guard let runStart else {
                runStart = s
                runEnd = e
                return
            }
            if runEnd == s {
                runEnd = e
                return
            }
            moveRunToScratch(runStart)
        }
        scratchAppend(s, e - s)
    }

    @inline(never)
    mutating func moveRunToScratch(_ s: UnsafePointer<UInt8>?) {
        runInScratch = true
        scratchCount = 0
        if let s { scratchAppend(s, runEnd.unsafelyUnwrapped - s) }
        runStart = nil
    }

    /// Adds a character that is not in the input as such (a reference, a normalized line end).
    @inline(__always)
    mutating func appendRun(scalar u: UInt32) {
        if !runInScratch { moveRunToScratch(runStart) }
        scratchAppend(scalar: u)
    }

    /// Ends the text run: pushes it as a child unless it is dropped (empty, or only literal
    /// whitespace without keep_whitespace).
    @inline(__always)
    mutating func flushText() -> Bool {
        defer {
            runStart = nil
            runInScratch = false
            runContent = false
        }
        guard runContent || keepWhitespace else { return true }
        if runInScratch {
            guard scratchCount > 0 else { return true }
            lua_pushlstring(L, UnsafeRawPointer(scratch.unsafelyUnwrapped).assumingMemoryBound(to: CChar.self), scratchCount)
        } else {
            guard let s = runStart else { return true }
            lua_pushlstring(L, UnsafeRawPointer(s).assumingMemoryBound(to: CChar.self), runEnd.unsafelyUnwrapped - s)
        }
        return addChild()
    }

    // MARK: document

    mutating func parseDocument() -> Bool {
        if end - p >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF {
            p += 3
        } else if end - p >= 2 && ((p[0] == 0xFE && p[1] == 0xFF) || (p[0] == 0xFF && p[1] == 0xFE)) {
            return fail(.utf16("a UTF-16 byte order mark"), at: p)
        } else if end - p >= 2 && ((p[0] == 0 && p[1] == UInt8(ascii: "<")) || (p[0] == UInt8(ascii: "<") && p[1] == 0)) {
            return fail(.utf16("'<' is followed or preceded by a zero byte"), at: p)
        }
        if at("<?xml") && end - p > 5 && (byteClass(p[5]) & 4 != 0 || p[5] == UInt8(ascii: "?")) {
            guard parseDeclaration() else { return false }
        }
        // The prolog: whitespace, comments, PIs, one DOCTYPE; then the root element.
        while true {
            skipWhitespace()
            guard p < end else { return fail(.noRoot, at: p) }
            guard p.pointee == UInt8(ascii: "<") else { return fail(.textOutsideRoot(after: false), at: p) }
            guard end - p >= 2 else { return fail(.unexpectedEnd("an element name after '<'"), at: end) }
            let c = p[1]
            if c == UInt8(ascii: "?") {
                guard skipPI() else { return false }
            } else if c == UInt8(ascii: "!") {
                if at("<!--") {
                    guard skipComment() else { return false }
                } else if at("<!DOCTYPE") {
                    if sawDoctype { return fail(.doctypeMisplaced("appears twice (a document has at most one)"), at: p) }
                    guard skipDoctype() else { return false }
                } else if at("<![CDATA[") {
                    return fail(.cdataOutsideRoot, at: p)
                } else {
                    return failMarkup()
                }
            } else {
                break
            }
        }
        guard parseStartTag() else { return false }
        if depth > 0 {
            guard parseContent() else { return false }
        }
        // After the root: whitespace, comments and PIs only.
        while true {
            skipWhitespace()
            guard p < end else { return true }
            guard p.pointee == UInt8(ascii: "<") else { return fail(.textOutsideRoot(after: true), at: p) }
            guard end - p >= 2 else { return fail(.textOutsideRoot(after: true), at: p) }
            let c = p[1]
            if c == UInt8(ascii: "?") {
                guard skipPI() else { return false }
            } else if at("<!--") {
                guard skipComment() else { return false }
            } else if at("<!DOCTYPE") {
                return fail(.doctypeMisplaced("after the root element (it must come before it)"), at: p)
            } else if at("<![CDATA[") {
                return fail(.cdataOutsideRoot, at: p)
            } else if byteClass(c) & 1 != 0 || c >= 0x80 {
                let s = p
                p += 1
                let nameStart = p
                _ = scanName("a name")
                return fail(.secondRoot(length: p - nameStart), at: s)
            } else {
                return fail(.textOutsideRoot(after: true), at: p)
            }
        }
    }

    @inline(never)
    mutating func failMarkup() -> Bool {
        if end - p < 9 && memcmp(p, "<![CDATA[", min(9, end - p)) == 0 { return fail(.unexpectedEnd("'<![CDATA['"), at: end) }
        if end - p < 9 && memcmp(p, "<!DOCTYPE", min(9, end - p)) == 0 { return fail(.unexpectedEnd("'<!DOCTYPE'"), at: end) }
        if end - p < 4 && memcmp(p, "<!--", min(4, end - p)) == 0 { return fail(.unexpectedEnd("'<!--'"), at: end) }
        p += 2
        return failHere("'--' or '[CDATA[' after '<!'")
    }

    /// Element content, until the root closes. Iterative: the open elements are `frames`.
    mutating func parseContent() -> Bool {
        while true {
            guard p < end else {
                let frame = frames.unsafelyUnwrapped[depth - 1]
                return fail(.unclosed(name: frame.name - start, length: frame.nameLength), at: end)
            }
            if p.pointee != UInt8(ascii: "<") {
                guard parseText() else { return false }
                continue
            }
            guard end - p >= 2 else { return fail(.unexpectedEnd("an element name after '<'"), at: end) }
            switch p[1] {
            case UInt8(ascii: "/"):
                guard flushText(), parseEndTag() else { return false }
                if depth == 0 { return true }
            case UInt8(ascii: "!"):
                if at("<!--") {
                    guard skipComment() else { return false }
                } else if at("<![CDATA[") {
                    guard parseCDATA() else { return false }
                } else if at("<!DOCTYPE") {
                    return fail(.doctypeMisplaced("inside an element (it must come before the root element)"), at: p)
                } else {
                    return failMarkup()
                }
            case UInt8(ascii: "?"):
                guard skipPI() else { return false }
            default:
                guard flushText(), parseStartTag() else { return false }
            }
        }
    }

    // MARK: elements

    /// At '<' of a start tag: pushes the element table. An empty-element tag (`<a/>`) completes
    /// the element; otherwise it becomes the open element.
    mutating func parseStartTag() -> Bool {
        let lt = p
        if depth >= maxDepth { return fail(.tooDeep(maxDepth), at: lt) }
        guard lua_checkstack(L, 8) != 0 else { return fail(.luaStackExhausted, at: lt) }
        p += 1
        let name = p
        guard scanName("an element name after '<'; write &lt; for a '<' in text") else { return false }
        let nameLength = p - name
        // The element table, with its tag; the attributes wait above it.
        let element = lua_gettop(L) + 1
        lua_createtable(L, 0, 4)
        lua_pushvalue(L, tagKey)
        lua_pushlstring(L, UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self), nameLength)
        lua_rawset(L, element)

        var count = 0
        var declarations = false
        var empty = false
        while true {
            let space = skipWhitespace()
            guard p < end else { return fail(.unexpectedEnd("'>' to end the start tag"), at: p) }
            let c = p.pointee
            if c == UInt8(ascii: ">") {
                p += 1
                break
            }
            if c == UInt8(ascii: "/") {
                p += 1
                guard p < end && p.pointee == UInt8(ascii: ">") else { return failHere("'>' after '/' in a start tag") }
                p += 1
                empty = true
                break
            }
            guard space else { return fail(.unexpected("whitespace, '>' or '/>' after an attribute"), at: p) }
            guard lua_checkstack(L, 8) != 0 else { return fail(.luaStackExhausted, at: p) }
            let attribute = p
            guard scanName("an attribute name, '>' or '/>'") else { return false }
            let attributeLength = p - attribute
            if count == attrCapacity { growAttributes() }
            attrOffsets.unsafelyUnwrapped[count] = attribute - start
            lua_pushlstring(L, UnsafeRawPointer(attribute).assumingMemoryBound(to: CChar.self), attributeLength)
            skipWhitespace()
            guard p < end && p.pointee == UInt8(ascii: "=") else {
                if p >= end { return fail(.unexpectedEnd("'=' after an attribute name"), at: p) }
                return fail(.unexpectedAttribute("'='", name: attribute - start, length: attributeLength), at: p)
            }
            p += 1
            skipWhitespace()
            guard p < end else { return fail(.unexpectedEnd("a quoted attribute value"), at: p) }
            guard p.pointee == UInt8(ascii: "\"") || p.pointee == UInt8(ascii: "'") else {
                return fail(.unexpectedAttribute("'\"' or ''' to open the value (values are quoted)", name: attribute - start, length: attributeLength), at: p)
            }
            guard parseAttributeValue() else { return false }
            if attributeLength >= 5 && memcmp(attribute, "xmlns", 5) == 0 && (attributeLength == 5 || (attributeLength > 6 && attribute[5] == UInt8(ascii: ":"))) {
                declarations = true
            }
            count += 1
        }

        // attrs: [element][name][value]... → a table of exactly that size; a name seen twice is
        // an error.
        lua_pushvalue(L, attrsKey)
        lua_createtable(L, 0, Int32(count))
        let attrs = element + 2 * Int32(count) + 2
        for i in 0..<Int32(count) {
            let k = element + 1 + 2 * i
            if count > 1 {
                lua_pushvalue(L, k)
                if lua_rawget(L, attrs) != LUA_TNIL {
                    let offset = attrOffsets.unsafelyUnwrapped[Int(i)]
                    var n = 0
                    _ = lua_tolstring(L, k, &n)
                    return fail(.duplicateAttribute(length: n), at: start + offset)
                }
                lua_settop(L, -2)
            }
            lua_pushvalue(L, k)
            lua_pushvalue(L, k + 1)
            lua_rawset(L, attrs)
        }
        lua_rawset(L, element)
        let undoMark = undoCount
        if count > 0 {
            if declarations { declareNamespaces(element, count) }
            lua_settop(L, element)
        }

        // ns: what the prefix (or the default namespace) is bound to.
        var colon = 0
        while colon < nameLength && name[colon] != UInt8(ascii: ":") { colon += 1 }
        if colon > 0 && colon < nameLength - 1 {
            lookUpNamespace(name, colon, element)
        } else if undoCount > 0 {
            lookUpNamespace(name, 0, element)
        }
        if empty {
            lua_pushvalue(L, childrenKey)
            lua_createtable(L, 0, 0)
            lua_rawset(L, element)
            restoreNamespaces(undoMark)
            return addChild()
        }
        if depth == frameCapacity { growFrames() }
        frames.unsafelyUnwrapped[depth] = XMLFrame(base: element, count: 0, direct: false, name: name, nameLength: nameLength, undoMark: undoMark)
        depth += 1
        return true
    }

    /// Sets element.ns to what `prefix` (the first `length` bytes of the tag; none for the
    /// default namespace) is bound to, if anything. The last answer is remembered until the
    /// bindings change: most elements of a document use one or two prefixes.
    @inline(__always)
    mutating func lookUpNamespace(_ prefix: UnsafePointer<UInt8>, _ length: Int, _ element: Int32) {
        if cacheGeneration != generation || cacheLength != length || memcmp(prefix, cachePrefix, length) != 0 {
            if length == 0 {
                lua_pushvalue(L, emptyKey)
            } else {
                lua_pushlstring(L, UnsafeRawPointer(prefix).assumingMemoryBound(to: CChar.self), length)
            }
            cacheBound = lua_rawget(L, scope) == LUA_TSTRING
            lunet_replace(L, cache)
            cachePrefix = prefix
            cacheLength = length
            cacheGeneration = generation
        }
        if cacheBound {
            lua_pushvalue(L, nsKey)
            lua_pushvalue(L, cache)
            lua_rawset(L, element)
        }
    }

    /// The xmlns attributes among the `count` name/value pairs above `element` take effect:
    /// each binding goes into the scope table, the value it replaces into the undo list.
    mutating func declareNamespaces(_ element: Int32, _ count: Int) {
        generation &+= 1
        for i in 0..<Int32(count) {
            let k = element + 1 + 2 * i
            var n = 0
            let name = UnsafeRawPointer(lua_tolstring(L, k, &n)!).assumingMemoryBound(to: UInt8.self)
            guard n >= 5 && memcmp(name, "xmlns", 5) == 0 && (n == 5 || (n > 6 && name[5] == UInt8(ascii: ":"))) else { continue }
            if n == 5 {
                lua_pushvalue(L, emptyKey)
            } else {
                lua_pushlstring(L, UnsafeRawPointer(name + 6).assumingMemoryBound(to: CChar.self), n - 6)
            }
            // [prefix]: remember what it was bound to, then bind it (an empty URI unbinds).
            lua_pushvalue(L, -1)
            lua_rawget(L, scope)
            lua_rawseti(L, undo, lua_Integer(2 * undoCount + 2))
            lua_pushvalue(L, -1)
            lua_rawseti(L, undo, lua_Integer(2 * undoCount + 1))
            undoCount += 1
            var length = 0
            _ = lua_tolstring(L, k + 1, &length)
            if length == 0 {
                lua_pushnil(L)
            } else {
                lua_pushvalue(L, k + 1)
            }
            lua_rawset(L, scope)
        }
    }

    /// Undoes the namespace declarations made since `mark`, latest first.
    @inline(__always)
    mutating func restoreNamespaces(_ mark: Int) {
        if undoCount > mark { generation &+= 1 }
        while undoCount > mark {
            undoCount -= 1
            lua_rawgeti(L, undo, lua_Integer(2 * undoCount + 1))
            lua_rawgeti(L, undo, lua_Integer(2 * undoCount + 2))
            lua_rawset(L, scope)
        }
    }

    /// At "</": checks that it closes the open element, then completes it.
    mutating func parseEndTag() -> Bool {
        let lt = p
        p += 2
        let frame = frames.unsafelyUnwrapped + (depth - 1)
        let n = frame.pointee.nameLength
        if end - p > n && memcmp(p, frame.pointee.name, n) == 0 && p[n] < 0x80 && byteClass(p[n]) & 2 == 0 {
            p += n
        } else {
            let name = p
            guard scanName("the element name after '</'") else { return false }
            guard p - name == n && memcmp(name, frame.pointee.name, n) == 0 else {
                return fail(.mismatched(found: name - start, foundLength: p - name, open: frame.pointee.name - start, openLength: n), at: lt)
            }
        }
        skipWhitespace()
        guard p < end else { return fail(.unexpectedEnd("'>' to end the end tag"), at: p) }
        guard p.pointee == UInt8(ascii: ">") else { return fail(.unexpected("'>' to end the end tag"), at: p) }
        p += 1

        // The element's children go into its table.
        let base = frame.pointee.base
        if !frame.pointee.direct { makeChildren(frame, size: frame.pointee.count) }
        lua_pushvalue(L, childrenKey)
        lua_rotate(L, -2, 1)
        lua_rawset(L, base)
        restoreNamespaces(frame.pointee.undoMark)
        depth -= 1
        return addChild()
    }

    /// The value on top completes an item of the open element (nothing to do for the root).
    @inline(__always)
    mutating func addChild() -> Bool {
        guard depth > 0 else { return true }
        let frame = frames.unsafelyUnwrapped + (depth - 1)
        if frame.pointee.direct {
            lua_rawseti(L, frame.pointee.base + 1, lua_Integer(frame.pointee.count + 1))
        }
        frame.pointee.count += 1
        if !frame.pointee.direct && frame.pointee.count >= Self.pendingLimit { makeChildren(frame) }
        if lua_checkstack(L, 8) == 0 {
            if !frame.pointee.direct { makeChildren(frame) }
            guard lua_checkstack(L, 8) != 0 else { return fail(.luaStackExhausted, at: p) }
        }
        return true
    }

    /// Makes the children table of the element at `frame` from the items piled above it, and
    /// leaves it at base + 1: from now on items go straight into it.
    mutating func makeChildren(_ frame: UnsafeMutablePointer<XMLFrame>, size: Int? = nil) {
        let base = frame.pointee.base
        let n = frame.pointee.count
        lua_createtable(L, Int32(clamping: size ?? 2 * n), 0)
        if n > 0 {
            lua_rotate(L, base + 1, 1)
            var i = lua_Integer(n)
            while i > 0 {
                lua_rawseti(L, base + 1, i)
                i -= 1
            }
        }
        frame.pointee.direct = true
    }

    @inline(never)
    mutating func growFrames() {
        let capacity = max(32, frameCapacity * 2)
        guard let grown = realloc(frames, capacity * MemoryLayout<XMLFrame>.stride) else { xmlCodecOutOfMemory() }
        frames = grown.assumingMemoryBound(to: XMLFrame.self)
        frameCapacity = capacity
    }

    @inline(never)
    mutating func growAttributes() {
        let capacity = max(16, attrCapacity * 2)
        guard let grown = realloc(attrOffsets, capacity * MemoryLayout<Int>.stride) else { xmlCodecOutOfMemory() }
        attrOffsets = grown.assumingMemoryBound(to: Int.self)
        attrCapacity = capacity
    }

    // MARK: text

    /// At character data inside an element: adds it to the text run, up to the next '<' (or
    /// the end of the input, which the caller reports).
    mutating func parseText() -> Bool {
        var s = p
        if !runContent {
            // Leading whitespace: alone, it is formatting.
            while p < end {
                let c = p.pointee
                if c == 0x20 || c == 0x0A || c == 0x09 {
                    p += 1
                } else if c == 0x0D {
                    appendRun(s, p)
                    appendRun(scalar: 0x0A)
                    p += 1
                    if p < end && p.pointee == 0x0A { p += 1 }
                    s = p
                } else {
                    break
                }
            }
            if p >= end || p.pointee == UInt8(ascii: "<") {
                appendRun(s, p)
                return true
            }
            runContent = true
        }
        while true {
            while end - p >= 8 {
                let special = XMLScan.textSpecial(UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)))
                if special != 0 {
                    p += special.trailingZeroBitCount >> 3
                    break
                }
                p += 8
            }
            guard p < end else {
                appendRun(s, p)
                return true
            }
            let c = p.pointee
            switch c {
            case UInt8(ascii: "<"):
                appendRun(s, p)
                return true
            case 0x0A, 0x09:
                p += 1
            case UInt8(ascii: "&"):
                appendRun(s, p)
                guard let u = parseReference() else { return false }
                appendRun(scalar: u)
                s = p
            case 0x0D:
                appendRun(s, p)
                appendRun(scalar: 0x0A)
                p += 1
                if p < end && p.pointee == 0x0A { p += 1 }
                s = p
            case UInt8(ascii: "]"):
                if end - p >= 3 && p[1] == UInt8(ascii: "]") && p[2] == UInt8(ascii: ">") { return fail(.cdataEndInText, at: p) }
                p += 1
            default:
                if c >= 0x80 {
                    guard skipNonASCII() else { return false }
                } else if c < 0x20 {
                    return fail(.invalidCharacter(UInt32(c)), at: p)
                } else {
                    p += 1
                }
            }
        }
    }

    /// At "<![CDATA[": its content joins the text run as it is (line ends normalized).
    mutating func parseCDATA() -> Bool {
        p += 9
        var s = p
        while true {
            while end - p >= 8 {
                let special = XMLScan.cdataSpecial(UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)))
                if special != 0 {
                    p += special.trailingZeroBitCount >> 3
                    break
                }
                p += 8
            }
            guard p < end else { return fail(.unexpectedEnd("']]>' to close the CDATA section"), at: p) }
            let c = p.pointee
            if c == UInt8(ascii: "]") {
                if end - p >= 3 && p[1] == UInt8(ascii: "]") && p[2] == UInt8(ascii: ">") {
                    if p > s { runContent = true }
                    appendRun(s, p)
                    p += 3
                    return true
                }
                p += 1
            } else if c == 0x0D {
                runContent = true
                appendRun(s, p)
                appendRun(scalar: 0x0A)
                p += 1
                if p < end && p.pointee == 0x0A { p += 1 }
                s = p
            } else if c >= 0x80 {
                guard skipNonASCII() else { return false }
            } else if c < 0x20 && c != 0x0A && c != 0x09 {
                return fail(.invalidCharacter(UInt32(c)), at: p)
            } else {
                p += 1
            }
        }
    }

    /// At '&': the character the reference stands for (p moves past its ';'), or nil after
    /// recording the failure.
    mutating func parseReference() -> UInt32? {
        let amp = p
        p += 1
        guard p < end else {
            _ = fail(.unexpectedEnd("an entity or character reference after '&'"), at: p)
            return nil
        }
        if p.pointee == UInt8(ascii: "#") {
            p += 1
            var hex = false
            if p < end && p.pointee == UInt8(ascii: "x") {
                hex = true
                p += 1
            }
            var v: UInt32 = 0
            var digits = 0
            while p < end {
                let c = p.pointee
                var d: UInt32
                if c &- UInt8(ascii: "0") < 10 {
                    d = UInt32(c &- UInt8(ascii: "0"))
                } else if hex && (c | 0x20) &- UInt8(ascii: "a") < 6 {
                    d = UInt32((c | 0x20) &- UInt8(ascii: "a")) + 10
                } else {
                    break
                }
                if v <= 0x10FFFF { v = v * (hex ? 16 : 10) + d }
                digits += 1
                p += 1
            }
            guard digits > 0 else {
                _ = p < end ? fail(.malformedCharacterReference, at: amp) : fail(.unexpectedEnd("the digits of a character reference"), at: p)
                return nil
            }
            guard p < end else {
                _ = fail(.unexpectedEnd("';' to end the character reference"), at: p)
                return nil
            }
            guard p.pointee == UInt8(ascii: ";") else {
                _ = fail(.malformedCharacterReference, at: amp)
                return nil
            }
            p += 1
            guard XMLScan.isXMLChar(v) else {
                _ = fail(.invalidCharacterReference(length: p - amp, v), at: amp)
                return nil
            }
            return v
        }
        // A named entity: only XML's five.
        let left = end - p
        if left >= 3 && p[2] == UInt8(ascii: ";") && p[1] == UInt8(ascii: "t") {
            if p[0] == UInt8(ascii: "l") { p += 3; return 0x3C }
            if p[0] == UInt8(ascii: "g") { p += 3; return 0x3E }
        }
        if left >= 4 && memcmp(p, "amp;", 4) == 0 { p += 4; return 0x26 }
        if left >= 5 && memcmp(p, "quot;", 5) == 0 { p += 5; return 0x22 }
        if left >= 5 && memcmp(p, "apos;", 5) == 0 { p += 5; return 0x27 }
        let c = p.pointee
        guard byteClass(c) & 1 != 0 || c >= 0x80 else {
            _ = fail(.bareAmpersand, at: amp)
            return nil
        }
        guard scanName("an entity name") else {
            if case .unexpected = failure { _ = fail(.bareAmpersand, at: amp) }
            return nil
        }
        guard p < end else {
            _ = fail(.unexpectedEnd("';' to end the entity reference"), at: p)
            return nil
        }
        guard p.pointee == UInt8(ascii: ";") else {
            _ = fail(.bareAmpersand, at: amp)
            return nil
        }
        p += 1
        _ = fail(.unknownEntity(length: p - amp, doctype: sawDoctype), at: amp)
        return nil
    }

    /// At the opening quote: pushes the value (references replaced, whitespace normalized).
    mutating func parseAttributeValue() -> Bool {
        let quote = p.pointee
        p += 1
        let s = p
        var segment = p
        var inScratch = false
        while true {
            while end - p >= 8 {
                let special = XMLScan.valueSpecial(UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)), quote)
                if special != 0 {
                    p += special.trailingZeroBitCount >> 3
                    break
                }
                p += 8
            }
            guard p < end else { return fail(.unexpectedEnd("the closing quote of the attribute value"), at: p) }
            let c = p.pointee
            if c == quote {
                if inScratch {
                    scratchAppend(segment, p - segment)
                    lua_pushlstring(L, UnsafeRawPointer(scratch.unsafelyUnwrapped).assumingMemoryBound(to: CChar.self), scratchCount)
                } else {
                    lua_pushlstring(L, UnsafeRawPointer(s).assumingMemoryBound(to: CChar.self), p - s)
                }
                p += 1
                return true
            }
            switch c {
            case UInt8(ascii: "<"):
                return fail(.lessThanInAttribute, at: p)
            case UInt8(ascii: "&"):
                if !inScratch {
                    inScratch = true
                    scratchCount = 0
                }
                scratchAppend(segment, p - segment)
                guard let u = parseReference() else { return false }
                scratchAppend(scalar: u)
                segment = p
            case 0x09, 0x0A, 0x0D:
                if !inScratch {
                    inScratch = true
                    scratchCount = 0
                }
                scratchAppend(segment, p - segment)
                scratchAppend(scalar: 0x20)
                p += 1
                if c == 0x0D && p < end && p.pointee == 0x0A { p += 1 }
                segment = p
            default:
                if c >= 0x80 {
                    guard skipNonASCII() else { return false }
                } else if c < 0x20 {
                    return fail(.invalidCharacter(UInt32(c)), at: p)
                } else {
                    p += 1
                }
            }
        }
    }

    // MARK: markup that is skipped

    /// At "<!--": moves past "-->".
    mutating func skipComment() -> Bool {
        p += 4
        while true {
            guard p < end else { return fail(.unexpectedEnd("'-->' to close the comment"), at: p) }
            if p.pointee == UInt8(ascii: "-") && end - p >= 2 && p[1] == UInt8(ascii: "-") {
                guard end - p >= 3 else { return fail(.unexpectedEnd("'-->' to close the comment"), at: end) }
                guard p[2] == UInt8(ascii: ">") else { return fail(.doubleHyphenInComment, at: p) }
                p += 3
                return true
            }
            guard skipCharacter() else { return false }
        }
    }

    /// At "<?": moves past "?>". The target "xml" (any case) is reserved for the declaration.
    mutating func skipPI() -> Bool {
        let lt = p
        p += 2
        let target = p
        guard scanName("a processing instruction target after '<?'") else { return false }
        if p - target == 3 && (target[0] | 0x20) == UInt8(ascii: "x") && (target[1] | 0x20) == UInt8(ascii: "m") && (target[2] | 0x20) == UInt8(ascii: "l") {
            return fail(.declarationNotAtStart, at: lt)
        }
        if at("?>") {
            p += 2
            return true
        }
        guard skipWhitespace() else { return failHere("whitespace or '?>' after the processing instruction target") }
        while true {
            guard p < end else { return fail(.unexpectedEnd("'?>' to close the processing instruction"), at: p) }
            if p.pointee == UInt8(ascii: "?") && end - p >= 2 && p[1] == UInt8(ascii: ">") {
                p += 2
                return true
            }
            guard skipCharacter() else { return false }
        }
    }

    /// At "<!DOCTYPE": moves past its '>'. Nothing in it is read: no entity it declares is ever
    /// expanded, no external DTD fetched, no default attribute applied.
    mutating func skipDoctype() -> Bool {
        sawDoctype = true
        p += 9
        guard skipWhitespace() else { return failHere("whitespace after '<!DOCTYPE'") }
        guard scanName("the document type name") else { return false }
        while true {
            skipWhitespace()
            guard p < end else { return fail(.unexpectedEnd("'>' to end the DOCTYPE"), at: p) }
            let c = p.pointee
            if c == UInt8(ascii: ">") {
                p += 1
                return true
            }
            if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                guard skipQuoted() else { return false }
            } else if c == UInt8(ascii: "[") {
                p += 1
                guard skipInternalSubset() else { return false }
            } else if byteClass(c) & 1 != 0 {
                guard scanName("a keyword") else { return false }
            } else {
                return fail(.unexpected("'>' to end the DOCTYPE"), at: p)
            }
        }
    }

    mutating func skipQuoted() -> Bool {
        let quote = p.pointee
        p += 1
        while true {
            guard p < end else { return fail(.unexpectedEnd("the closing quote"), at: p) }
            if p.pointee == quote {
                p += 1
                return true
            }
            guard skipCharacter() else { return false }
        }
    }

    /// After '[': declarations, comments, PIs and parameter-entity references, up to ']'.
    mutating func skipInternalSubset() -> Bool {
        while true {
            skipWhitespace()
            guard p < end else { return fail(.unexpectedEnd("']' to end the DOCTYPE's internal subset"), at: p) }
            let c = p.pointee
            if c == UInt8(ascii: "]") {
                p += 1
                return true
            }
            if c == UInt8(ascii: "%") {
                p += 1
                guard scanName("a parameter entity name after '%'") else { return false }
                guard p < end && p.pointee == UInt8(ascii: ";") else { return failHere("';' after a parameter entity reference") }
                p += 1
            } else if at("<!--") {
                guard skipComment() else { return false }
            } else if at("<?") {
                guard skipPI() else { return false }
            } else if at("<!") && end - p > 2 && byteClass(p[2]) & 1 != 0 {
                // <!ENTITY ...>, <!ELEMENT ...>, <!ATTLIST ...>, <!NOTATION ...>: to its '>'.
                p += 2
                while true {
                    guard p < end else { return fail(.unexpectedEnd("'>' to end the markup declaration"), at: p) }
                    let d = p.pointee
                    if d == UInt8(ascii: ">") {
                        p += 1
                        break
                    }
                    if d == UInt8(ascii: "\"") || d == UInt8(ascii: "'") {
                        guard skipQuoted() else { return false }
                    } else if d == UInt8(ascii: "<") {
                        return fail(.unexpected("'>' to end the markup declaration"), at: p)
                    } else {
                        guard skipCharacter() else { return false }
                    }
                }
            } else {
                return fail(.unexpected("a markup declaration or ']' in the DOCTYPE"), at: p)
            }
        }
    }

    // MARK: the XML declaration

    /// Whether the n bytes at s are `word` (lowercase ASCII), in any case.
    static func equalsIgnoringCase(_ s: UnsafePointer<UInt8>, _ n: Int, _ word: StaticString) -> Bool {
        guard n == word.utf8CodeUnitCount else { return false }
        for i in 0..<n {
            var c = s[i]
            if c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") { c |= 0x20 }
            if c != word.utf8Start[i] { return false }
        }
        return true
    }

    /// At "<?xml" + whitespace or '?': version (required), encoding, standalone, in that order.
    mutating func parseDeclaration() -> Bool {
        let lt = p
        p += 5
        var seen = 0
        while true {
            let space = skipWhitespace()
            guard p < end else { return fail(.unexpectedEnd("'?>' to end the XML declaration"), at: p) }
            if p.pointee == UInt8(ascii: "?") {
                p += 1
                guard p < end && p.pointee == UInt8(ascii: ">") else { return failHere("'>' after '?' in the XML declaration") }
                p += 1
                guard seen >= 1 else { return fail(.badDeclaration("the version is missing"), at: lt) }
                return true
            }
            guard space else { return fail(.unexpected("whitespace or '?>' in the XML declaration"), at: p) }
            let name = p
            while p < end && (p.pointee | 0x20) &- UInt8(ascii: "a") < 26 { p += 1 }
            let which: Int
            if p - name == 7 && memcmp(name, "version", 7) == 0 {
                which = 1
            } else if p - name == 8 && memcmp(name, "encoding", 8) == 0 {
                which = 2
            } else if p - name == 10 && memcmp(name, "standalone", 10) == 0 {
                which = 3
            } else {
                p = name
                return fail(.badDeclaration("expected version, encoding or standalone"), at: name)
            }
            guard which > seen else { p = name; return fail(.badDeclaration("version, encoding and standalone must come once each, in that order"), at: name) }
            guard which == 1 || seen >= 1 else { p = name; return fail(.badDeclaration("the version must come first"), at: name) }
            seen = which
            skipWhitespace()
            guard p < end && p.pointee == UInt8(ascii: "=") else { return failHere("'=' in the XML declaration") }
            p += 1
            skipWhitespace()
            guard p < end && (p.pointee == UInt8(ascii: "\"") || p.pointee == UInt8(ascii: "'")) else { return failHere("a quoted value in the XML declaration") }
            let quote = p.pointee
            p += 1
            let value = p
            while p < end && p.pointee != quote && p.pointee != UInt8(ascii: "<") && p.pointee != UInt8(ascii: ">") { p += 1 }
            guard p < end && p.pointee == quote else { return failHere("the closing quote in the XML declaration") }
            let n = p - value
            p += 1
            switch which {
            case 1:
                guard n >= 3 && value[0] == UInt8(ascii: "1") && value[1] == UInt8(ascii: ".")
                      && (2..<n).allSatisfy({ value[$0] &- UInt8(ascii: "0") < 10 }) else {
                    return fail(.badDeclaration("the version must be 1.x"), at: value)
                }
            case 2:
                let valid = n > 0 && (value[0] | 0x20) &- UInt8(ascii: "a") < 26 && (1..<max(n, 1)).allSatisfy { i in
                    let c = value[i]
                    return (c | 0x20) &- UInt8(ascii: "a") < 26 || c &- UInt8(ascii: "0") < 10
                        || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
                }
                guard valid else { return fail(.badDeclaration("not an encoding name"), at: value) }
                if ignoreEncoding || Self.equalsIgnoringCase(value, n, "utf-8") { break }
                // US-ASCII is UTF-8 too, as long as every byte is ASCII.
                guard Self.equalsIgnoringCase(value, n, "us-ascii") || Self.equalsIgnoringCase(value, n, "ascii") else {
                    return fail(.encoding(length: n), at: value)
                }
                var q = start
                while q < end && q.pointee < 0x80 { q += 1 }
                if q < end { return fail(.notASCII(name: value - start, length: n), at: q) }
            default:
                guard (n == 3 && memcmp(value, "yes", 3) == 0) || (n == 2 && memcmp(value, "no", 2) == 0) else {
                    return fail(.badDeclaration("standalone must be \"yes\" or \"no\""), at: value)
                }
            }
        }
    }
}
