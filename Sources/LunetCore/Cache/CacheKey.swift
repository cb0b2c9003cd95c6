/// Where a stored response lives: the request method and the normalised absolute URL.
///
/// Normalisation (RFC 3986 §6.2.2 and §6.2.3, only steps that never change what a server sees):
/// scheme and host lower-cased; the default port (80 for http, 443 for https) and an empty port
/// dropped; an empty path becomes `/`; dot segments removed; percent-encodings get upper-case
/// hex, and those of unreserved characters (`A-Z a-z 0-9 - . _ ~`) are decoded (after dot
/// segments are removed, and never into a `.` or `..` segment, so `%2E%2E` stays a name, not a
/// step up); a `%` that starts no valid triplet stays as it is; the fragment is
/// dropped (it is never sent). Normalising a key's URL again gives the same key: the cache
/// re-keys stored URLs (invalidation, purge), so it must. The query keeps its order. User information (`user:pass@`) is
/// taken out of the key and kept apart as a credential (see `HTTPCache`), never stored in clear.
/// Only http and https URLs with a host have a key.
public struct CacheKey: Hashable, Sendable {
    /// `GET https://example.com/a?b` — what entries are filed under.
    public let string: String
    /// The normalised URL, without user information.
    public let url: String
    /// Lower-cased host, without port or brackets' contents changed (IPv6 literals keep `[]`).
    public let host: String
    /// `scheme://host[:port]`, for same-origin checks.
    public let origin: String
    /// `user:pass` when the URL had one.
    public let userinfo: String?

    /// Stored responses are only ever GET responses; HEAD requests are answered from them.
    public init?(method: String = "GET", url: String) {
        let ref = URLReference(parsing: url)
        guard let scheme = ref.scheme?.lowercased(), scheme == "http" || scheme == "https",
              var authority = ref.authority else { return nil }
        var userinfo: String? = nil
        if let at = authority.utf8.lastIndex(of: 0x40) {                   // '@'
            userinfo = String(authority[..<at])
            authority = String(authority[authority.index(after: at)...])
        }
        var host = authority
        var port = ""
        // The port follows the last ':' that is not inside an IPv6 literal.
        if let colon = authority.utf8.lastIndex(of: 0x3A), !authority[colon...].contains("]") {
            host = String(authority[..<colon])
            port = String(authority[authority.index(after: colon)...])
        }
        host = host.lowercased()
        while host.hasSuffix("."), host.count > 1 { host.removeLast() }     // "example.com." is example.com
        guard !host.isEmpty else { return nil }
        if port == "80" && scheme == "http" || port == "443" && scheme == "https" { port = "" }
        if !port.isEmpty {
            guard port.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            let trimmed = port.drop { $0 == "0" }
            port = trimmed.isEmpty ? "0" : String(trimmed)
            if port == "80" && scheme == "http" || port == "443" && scheme == "https" { port = "" }
        }
        let origin = scheme + "://" + host + (port.isEmpty ? "" : ":" + port)
        // Dot segments first, on the path as sent: an encoded dot (%2E) is data to curl and
        // servers, never a segment.
        var path = ref.path.isEmpty ? "/" : Self.normalizePath(URLReference.removeDotSegments(ref.path))
        if path.utf8.first != 0x2F { path = "/" + path }
        var normalized = origin + path
        if let query = ref.query { normalized += "?" + Self.normalizePercent(query) }
        self.url = normalized
        self.host = host
        self.origin = origin
        self.userinfo = (userinfo?.isEmpty ?? true) ? nil : userinfo
        self.string = method.uppercased() + " " + normalized
    }

    /// Upper-case hex in percent-encodings; unreserved characters decoded.
    static func normalizePercent(_ s: String) -> String {
        guard s.utf8.contains(0x25) else { return s }                       // no '%'
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        appendPercentNormalized(s.utf8[...], to: &out, decode: true)
        return String(decoding: out, as: UTF8.self)
    }

    /// A path (without dot segments) as `normalizePercent` does it, segment by segment, except
    /// that a segment that would decode to "." or ".." only gets upper-case hex: decoded, it
    /// would be a dot segment, which the next normalisation would remove (finding F2).
    static func normalizePath(_ s: String) -> String {
        guard s.utf8.contains(0x25) else { return s }
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        for (n, segment) in s.utf8.split(separator: 0x2F, omittingEmptySubsequences: false).enumerated() {
            if n > 0 { out.append(0x2F) }
            let start = out.count
            appendPercentNormalized(segment, to: &out, decode: true)
            let decoded = out[start...]
            if decoded.allSatisfy({ $0 == 0x2E }) && (1...2).contains(decoded.count) {
                out.removeSubrange(start...)
                appendPercentNormalized(segment, to: &out, decode: false)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    /// Appends `bytes` with upper-case hex in each valid `%XX`, and, when `decode`, the
    /// unreserved characters among them decoded. A `%` that starts no valid triplet is kept as
    /// it is, and then no triplet right after it is decoded into a hex digit: `%%61b` would
    /// become `%ab`, a new triplet, and normalising again would change it.
    private static func appendPercentNormalized(_ bytes: Substring.UTF8View, to out: inout [UInt8], decode: Bool) {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let c = bytes[i]
            let j = bytes.index(after: i)
            if c == 0x25, j < bytes.endIndex, let hi = hexValue(bytes[j]),
               bytes.index(after: j) < bytes.endIndex, let lo = hexValue(bytes[bytes.index(after: j)]) {
                let v = hi << 4 | lo
                let unreserved = (v | 0x20) >= 0x61 && (v | 0x20) <= 0x7A || v >= 0x30 && v <= 0x39
                    || v == 0x2D || v == 0x2E || v == 0x5F || v == 0x7E
                // A lone '%' ends `out` ("%") or one hex digit follows it ("%6"): every other
                // '%' in `out` starts a whole triplet.
                let afterLonePercent = out.last == 0x25
                    || out.count >= 2 && out[out.count - 2] == 0x25 && hexValue(out[out.count - 1]) != nil
                if decode && unreserved && !(hexValue(v) != nil && afterLonePercent) {
                    out.append(v)
                } else {
                    out.append(0x25); out.append(hexDigits[Int(hi)]); out.append(hexDigits[Int(lo)])
                }
                i = bytes.index(j, offsetBy: 2)
            } else {
                out.append(c)
                i = j
            }
        }
    }
}

/// A host rule: GET responses from matching hosts are stored and served for `ttl` seconds,
/// whatever their headers say. `pattern` is a host (`cdn.example.com`), `*.` and a domain
/// (`*.example.com`: every host under it, at any depth, but not `example.com` itself), or `*`
/// (every host). Matching ignores case and a trailing dot.
public struct CacheHostRule: Equatable, Sendable {
    public let pattern: String
    public let ttl: Double

    public init?(host pattern: String, ttl: Double) {
        var p = CacheText.trimmed(pattern).lowercased()
        let given = p
        while p.hasSuffix("."), p.count > 1 { p.removeLast() }
        guard !p.isEmpty, ttl.isFinite, ttl >= 0, p != "*" || given == "*" else { return nil }
        if p != "*" {
            let body = p.hasPrefix("*.") ? String(p.dropFirst(2)) : p
            guard !body.isEmpty, !body.contains("*"), !body.contains("/"), !body.contains(" ") else { return nil }
        }
        self.pattern = p
        self.ttl = ttl
    }

    /// `host` is lower-case (as `CacheKey.host` is).
    public func matches(_ host: String) -> Bool {
        if pattern == "*" { return true }
        if pattern.hasPrefix("*.") { return host.hasSuffix(pattern.dropFirst(1)) && host.count > pattern.count - 1 }
        return host == pattern
    }

    /// How specific the rule is: an exact host beats any wildcard, a longer domain a shorter one.
    var specificity: Int {
        if pattern == "*" { return 0 }
        if pattern.hasPrefix("*.") { return pattern.count }
        return Int.max
    }
}
