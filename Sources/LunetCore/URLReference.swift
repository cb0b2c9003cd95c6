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

    /// Splits as RFC 3986 Appendix B's regular expression does; never fails.
    public init(parsing string: String) {
        var rest = Substring(string)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let q = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: q)...])
            rest = rest[..<q]
        }
        // A scheme is letters, digits, + - . before the first ':' that comes before any / ? #.
        if let colon = rest.firstIndex(of: ":"), colon != rest.startIndex,
           !rest[..<colon].contains("/"),
           rest[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
           rest.first!.isLetter {
            scheme = String(rest[..<colon])
            rest = rest[rest.index(after: colon)...]
        }
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            authority = String(rest[..<end])
            rest = rest[end...]
        }
        path = String(rest)
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
                    if r.path.hasPrefix("/") {
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

    /// §5.2.3
    private func merge(_ referencePath: String) -> String {
        if authority != nil && path.isEmpty { return "/" + referencePath }
        guard let slash = path.lastIndex(of: "/") else { return referencePath }
        return String(path[...slash]) + referencePath
    }

    /// §5.2.4
    public static func removeDotSegments(_ input: String) -> String {
        var input = Substring(input)
        var output: [Substring] = []   // segments, each with its leading "/" when it had one
        while !input.isEmpty {
            if input.hasPrefix("../") { input = input.dropFirst(3) }
            else if input.hasPrefix("./") { input = input.dropFirst(2) }
            else if input.hasPrefix("/./") { input = input.dropFirst(2) }
            else if input == "/." { input = "/" }
            else if input.hasPrefix("/../") { input = input.dropFirst(3); if !output.isEmpty { output.removeLast() } }
            else if input == "/.." { input = "/"; if !output.isEmpty { output.removeLast() } }
            else if input == "." || input == ".." { input = "" }
            else {
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return output.joined()
    }
}
