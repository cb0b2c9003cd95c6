/// The directives of `Cache-Control` (RFC 9111 §5.2), for requests and responses alike.
///
/// Parsing never fails: a field is a comma-separated list of `name[=value]` directives, where a
/// value is a token or a quoted string (`\` escapes inside quotes are undone); names compare
/// without case; empty members are skipped; directives nobody knows are kept in `extensions`.
/// Several `Cache-Control` lines are one list. docs/cache.md has the decisions as a table.
///
/// - A malformed member — spaces around `=` (RFC 9110 §5.6 has none), text after the value, an
///   unclosed quote — keeps its most restrictive reading (§4.2.1: "the most restrictive
///   directive should be honored"): `max-age` and `s-maxage` become 0 (stale), `no-cache` and
///   `private` their bare forms, `no-store`, `must-revalidate` and `proxy-revalidate` still
///   count; the directives that only allow more (`public`, `immutable`, `must-understand`,
///   `max-stale`, `min-fresh`, `stale-while-revalidate`, `stale-if-error`, `only-if-cached`,
///   extensions) are dropped.
/// - Repeats: `max-age` or `s-maxage` given twice with different values is 0 (§4.2.1: "either
///   the first occurrence should be used or the response should be considered stale"; the
///   stale choice is the restrictive one). Other valued directives: the first occurrence
///   wins. `no-cache` and `private`: the bare form anywhere wins over field lists, and field
///   lists add up.
/// - Numbers (delta-seconds, §1.2.2): digits only, in either value form. A value too big is
///   2^31 (§1.2.2). An invalid `max-age` or `s-maxage` (`max-age=abc`, `max-age=1.5`,
///   `max-age=-1`, `max-age`) is 0, so that the response is stale (§4.2.1: "consider responses
///   that have invalid freshness information … to be stale"). An invalid `max-stale` or
///   `min-fresh` is ignored, as are invalid `stale-while-revalidate` and `stale-if-error`.
/// - `max-stale` with no value means "any staleness": `maxStale == Int.max`.
public struct CacheControl: Equatable, Sendable {
    /// The value delta-seconds saturate at (RFC 9111 §1.2.2).
    public static let greatestDelta = 2_147_483_648

    public var maxAge: Int?
    /// Parsed for completeness; a private cache ignores it (§5.2.2.10).
    public var sMaxAge: Int?
    public var noStore = false
    /// The bare `no-cache`: a stored response must be validated before each use.
    public var noCache = false
    /// `no-cache="a, b"` (lower-cased names): those fields may not be reused without validation.
    public var noCacheFields: [String] = []
    public var mustRevalidate = false
    public var proxyRevalidate = false
    public var mustUnderstand = false
    public var isPrivate = false
    public var privateFields: [String] = []
    public var isPublic = false
    public var noTransform = false
    public var immutable = false
    public var onlyIfCached = false
    /// Request: the client accepts responses stale by up to this many seconds (`Int.max`: any).
    public var maxStale: Int?
    /// Request: the client wants a response that stays fresh at least this many more seconds.
    public var minFresh: Int?
    public var staleWhileRevalidate: Int?
    public var staleIfError: Int?
    /// Other directives, lower-cased names with their unquoted values, in order.
    public var extensions: [Extension] = []

    public struct Extension: Equatable, Sendable {
        public var name: String
        public var value: String?
        public init(name: String, value: String?) { self.name = name; self.value = value }
    }

    public init() {}

    /// Every `Cache-Control` field of `headers`, as one list.
    public init(_ headers: HTTPHeaders) {
        self.init()
        for field in headers where field.name.caseInsensitiveEquals("Cache-Control") { parse(field.value) }
    }

    public init(parsing value: String) {
        self.init()
        parse(value)
    }

    /// True when no directive at all was found.
    public var isEmpty: Bool { self == CacheControl() }

    private mutating func parse(_ value: String) {
        for d in Self.directives(value) { apply(d.name, d.argument, wellFormed: d.wellFormed) }
    }

    private mutating func apply(_ name: String, _ argument: String?, wellFormed: Bool) {
        switch name {
        case "max-age":
            maxAge = Self.combined(maxAge, wellFormed ? Self.deltaSeconds(argument) ?? 0 : 0)
        case "s-maxage":
            sMaxAge = Self.combined(sMaxAge, wellFormed ? Self.deltaSeconds(argument) ?? 0 : 0)
        case "no-store": noStore = true
        case "no-cache":
            if let argument, wellFormed {
                noCacheFields.append(contentsOf: Self.fieldNames(argument).filter { !noCacheFields.contains($0) })
            } else {
                noCache = true
            }
        case "must-revalidate": mustRevalidate = true
        case "proxy-revalidate": proxyRevalidate = true
        case "private":
            if let argument, wellFormed {
                privateFields.append(contentsOf: Self.fieldNames(argument).filter { !privateFields.contains($0) })
            } else {
                isPrivate = true
            }
        default:
            guard wellFormed else { return }
            applyPermissive(name, argument)
        }
    }

    /// The directives that only allow more than their absence: read only from well-formed members.
    private mutating func applyPermissive(_ name: String, _ argument: String?) {
        switch name {
        case "must-understand": mustUnderstand = true
        case "public": isPublic = true
        case "no-transform": noTransform = true
        case "immutable": immutable = true
        case "only-if-cached": onlyIfCached = true
        case "max-stale":
            if maxStale == nil {
                if argument == nil { maxStale = Int.max } else if let n = Self.deltaSeconds(argument) { maxStale = n }
            }
        case "min-fresh":
            if minFresh == nil, let n = Self.deltaSeconds(argument) { minFresh = n }
        case "stale-while-revalidate":
            if staleWhileRevalidate == nil, let n = Self.deltaSeconds(argument) { staleWhileRevalidate = n }
        case "stale-if-error":
            if staleIfError == nil, let n = Self.deltaSeconds(argument) { staleIfError = n }
        default:
            extensions.append(Extension(name: name, value: argument))
        }
    }

    /// A lifetime directive seen again: the same value stays, another value makes it 0 (stale).
    private static func combined(_ old: Int?, _ new: Int) -> Int {
        guard let old else { return new }
        return old == new ? old : 0
    }

    /// delta-seconds: 1*DIGIT, saturating at 2^31; nil when absent or not digits.
    static func deltaSeconds(_ s: String?) -> Int? {
        guard let s, !s.isEmpty else { return nil }
        var v = 0
        for c in s.utf8 {
            guard c >= 0x30, c <= 0x39 else { return nil }
            if v < greatestDelta { v = v * 10 + Int(c - 0x30) }
        }
        return Swift.min(v, greatestDelta)
    }

    /// `a, B ,c` → ["a", "b", "c"].
    static func fieldNames(_ s: String) -> [String] {
        s.split(separator: ",").map { CacheText.trimmed(String($0)).lowercased() }.filter { !$0.isEmpty }
    }

    /// One member of the list: its lower-cased name, its unquoted argument, and whether it was
    /// well-formed (`token [ "=" ( token / quoted-string ) ]`, nothing else before the comma).
    struct Directive {
        let name: String
        let argument: String?
        let wellFormed: Bool
    }

    /// The list's directives, malformed ones included (marked); members without a name are skipped.
    static func directives(_ value: String) -> [Directive] {
        let b = Array(value.utf8)
        var result: [Directive] = []
        var i = 0
        func skipSpace() { while i < b.count, b[i] == 0x20 || b[i] == 0x09 { i += 1 } }
        func skipToComma() {
            var quoted = false
            while i < b.count {
                let c = b[i]
                if quoted {
                    if c == 0x5C { i += 1 } else if c == 0x22 { quoted = false }
                } else if c == 0x22 {
                    quoted = true
                } else if c == 0x2C {
                    break
                }
                i += 1
            }
        }
        while i < b.count {
            skipSpace()
            let nameStart = i
            while i < b.count, CacheText.isTokenByte(b[i]) { i += 1 }
            let name = String(decoding: b[nameStart..<i], as: UTF8.self).lowercased()
            let nameEnd = i
            skipSpace()
            var argument: String? = nil
            var wellFormed = true
            if !name.isEmpty, i < b.count, b[i] == 0x3D {           // '='
                if i != nameEnd { wellFormed = false }              // space before '='
                i += 1
                if i < b.count, b[i] == 0x20 || b[i] == 0x09 { wellFormed = false; skipSpace() }   // space after it
                if i < b.count, b[i] == 0x22 {                      // quoted-string
                    i += 1
                    var v: [UInt8] = []
                    var closed = false
                    while i < b.count {
                        let c = b[i]
                        if c == 0x5C, i + 1 < b.count { v.append(b[i + 1]); i += 2; continue }
                        if c == 0x22 { closed = true; i += 1; break }
                        v.append(c)
                        i += 1
                    }
                    argument = String(decoding: v, as: UTF8.self)
                    if !closed { wellFormed = false }
                } else {
                    let vStart = i
                    while i < b.count, CacheText.isTokenByte(b[i]) { i += 1 }
                    if i == vStart { wellFormed = false }           // "name=" and no token
                    argument = String(decoding: b[vStart..<i], as: UTF8.self)
                }
                skipSpace()
            }
            if i < b.count, b[i] != 0x2C { wellFormed = false }    // junk after the member
            skipToComma()
            if i < b.count { i += 1 }                               // the comma
            if !name.isEmpty { result.append(Directive(name: name, argument: argument, wellFormed: wellFormed)) }
        }
        return result
    }
}

/// Small text helpers shared by the cache files.
enum CacheText {
    /// tchar (RFC 9110 §5.6.2).
    static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: true
        default: false
        }
    }

    static func trimmed(_ s: String) -> String {
        let b = Array(s.utf8)
        var start = 0, end = b.count
        while start < end, b[start] == 0x20 || b[start] == 0x09 { start += 1 }
        while end > start, b[end - 1] == 0x20 || b[end - 1] == 0x09 { end -= 1 }
        if start == 0 && end == b.count { return s }
        return String(decoding: b[start..<end], as: UTF8.self)
    }
}
