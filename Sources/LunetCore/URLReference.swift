/// A URI split into the five parts of RFC 3986, and reference resolution as §5.2 defines it.
/// Pure string work: sessions use it to resolve paths against `base_url`.
public struct URLReference: Equatable, Sendable {
    public var scheme: String?
    public var authority: String?
    public var path: String
    public var query: String?
    public var fragment: String?

    public init(scheme: String? = nil, authority: String? = nil, path: String = "", query: String? = nil, fragment: String? = nil) {
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.query = query
        self.fragment = fragment
    }

    /// Splits as RFC 3986 Appendix B's regular expression does; never fails. Works on UTF-8
    /// bytes (every delimiter is ASCII), which is far cheaper than Characters.
    public init(parsing string: String) {
        let u = string.utf8
        var end = u.endIndex
        if let hash = u.firstIndex(of: 0x23) {                     // #
            fragment = String(string[u.index(after: hash)...])
            end = hash
        }
        if let q = u[..<end].firstIndex(of: 0x3F) {                // ?
            query = String(string[u.index(after: q)..<end])
            end = q
        }
        var i = u.startIndex
        // A scheme: a letter, then letters, digits, + - . up to a ':' before any '/'.
        if i < end, Self.isLetter(u[i]) {
            var j = u.index(after: i)
            while j < end, Self.isSchemeByte(u[j]) { j = u.index(after: j) }
            if j < end, u[j] == 0x3A {                             // :
                scheme = String(string[i..<j])
                i = u.index(after: j)
            }
        }
        if u[i..<end].starts(with: [0x2F, 0x2F]) {                // //
            let authorityStart = u.index(i, offsetBy: 2)
            let authorityEnd = u[authorityStart..<end].firstIndex(of: 0x2F) ?? end
            authority = String(string[authorityStart..<authorityEnd])
            i = authorityEnd
        }
        path = String(string[i..<end])
    }

    private static func isLetter(_ c: UInt8) -> Bool { (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A }
    private static func isSchemeByte(_ c: UInt8) -> Bool {
        isLetter(c) || (c >= 0x30 && c <= 0x39) || c == 0x2B || c == 0x2D || c == 0x2E
    }

    public var string: String {
        var s = ""
        if let scheme { s += scheme + ":" }
        if let authority { s += "//" + authority }
        s += path
        if let query { s += "?" + query }
        if let fragment { s += "#" + fragment }
        return s
    }

    /// RFC 3986 §5.2.2: the target of `reference` relative to this base.
    public func resolving(_ reference: String) -> URLReference {
        let r = URLReference(parsing: reference)
        var t = URLReference()
        if let rs = r.scheme {
            t.scheme = rs
            t.authority = r.authority
            t.path = Self.removeDotSegments(r.path)
            t.query = r.query
        } else {
            if r.authority != nil {
                t.authority = r.authority
                t.path = Self.removeDotSegments(r.path)
                t.query = r.query
            } else {
                if r.path.isEmpty {
                    t.path = path
                    t.query = r.query ?? query
                } else {
                    if r.path.utf8.first == 0x2F {                 // "/": bytes, see below
                        t.path = Self.removeDotSegments(r.path)
                    } else {
                        t.path = Self.removeDotSegments(merge(r.path))
                    }
                    t.query = r.query
                }
                t.authority = authority
            }
            t.scheme = scheme
        }
        t.fragment = r.fragment
        return t
    }

    // Path handling works on UTF-8 bytes, never on Characters: a "/" followed by a combining
    // mark (U+0301) is one Character, so Character-level searches and prefixes miss that "/"
    // (finding F5, docs/reliability.md). Every delimiter is ASCII, so cutting at one keeps the
    // UTF-8 valid.

    /// §5.2.3
    private func merge(_ referencePath: String) -> String {
        if authority != nil && path.isEmpty { return "/" + referencePath }
        guard let slash = path.utf8.lastIndex(of: 0x2F) else { return referencePath }
        return String(decoding: path.utf8[...slash], as: UTF8.self) + referencePath
    }

    /// §5.2.4
    public static func removeDotSegments(_ input: String) -> String {
        if !input.utf8.contains(0x2E) { return input }   // no "." at all: nothing to remove
        let bytes = Array(input.utf8)
        var input = bytes[...]
        var output: [ArraySlice<UInt8>] = []   // segments, each with its leading "/" when it had one
        func starts(_ p: StaticString) -> Bool {
            input.starts(with: UnsafeBufferPointer(start: p.utf8Start, count: p.utf8CodeUnitCount))
        }
        func equals(_ p: StaticString) -> Bool {
            input.elementsEqual(UnsafeBufferPointer(start: p.utf8Start, count: p.utf8CodeUnitCount))
        }
        while !input.isEmpty {
            if starts("../") { input = input.dropFirst(3) }
            else if starts("./") { input = input.dropFirst(2) }
            else if starts("/./") { input = input.dropFirst(2) }
            else if equals("/.") { output.append([0x2F]); break }                     // input becomes "/"
            else if starts("/../") { input = input.dropFirst(3); if !output.isEmpty { output.removeLast() } }
            else if equals("/..") { if !output.isEmpty { output.removeLast() }; output.append([0x2F]); break }
            else if equals(".") || equals("..") { break }
            else {
                let start = input.first == 0x2F ? input.startIndex + 1 : input.startIndex
                let end = input[start...].firstIndex(of: 0x2F) ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return String(decoding: output.joined(), as: UTF8.self)
    }
}
