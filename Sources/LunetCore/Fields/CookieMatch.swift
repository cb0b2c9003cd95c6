/// Which of a jar's cookies a request to a URL carries (RFC 6265 §5.4: domain, path, secure,
/// expiry), from the jar's Netscape lines as libcurl lists them. Pure: the cache uses it to
/// keep responses of different cookie holders apart before libcurl adds the Cookie header.
public enum CookieMatch {
    /// One Netscape cookie line: domain, subdomains, path, secure, expiry, name, value (tabs).
    struct Cookie: Equatable {
        var domain: String
        var subdomains: Bool
        var path: String
        var secure: Bool
        var expires: Double
        var name: String
        var value: String

        init?(line: String) {
            var text = Substring(line)
            if text.hasPrefix("#HttpOnly_") { text = text.dropFirst(10) } else if text.hasPrefix("#") { return nil }
            let f = text.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count >= 7 else { return nil }
            var domain = f[0].lowercased()
            if domain.hasPrefix(".") { domain.removeFirst() }
            self.domain = domain
            subdomains = f[1].uppercased() == "TRUE"
            path = f[2].isEmpty ? "/" : String(f[2])
            secure = f[3].uppercased() == "TRUE"
            expires = Double(f[4]) ?? 0
            name = String(f[5])
            value = f[6...].joined(separator: "\t")
        }
    }

    /// The `name=value` pairs `lines` send to `url`, sorted, joined by "; " ("" when none).
    public static func header(lines: [String], url: String, now: Double) -> String {
        guard let key = CacheKey(url: url) else { return "" }
        let https = key.origin.hasPrefix("https:")
        var path = URLReference(parsing: url).path
        if path.isEmpty { path = "/" }
        var pairs: [String] = []
        for line in lines {
            guard let c = Cookie(line: line) else { continue }
            guard domainMatches(key.host, c), pathMatches(path, c.path), !c.secure || https else { continue }
            if c.expires != 0 && c.expires < now { continue }
            pairs.append(c.name + "=" + c.value)
        }
        return pairs.sorted().joined(separator: "; ")
    }

    static func domainMatches(_ host: String, _ c: Cookie) -> Bool {
        if host == c.domain { return true }
        return c.subdomains && host.hasSuffix("." + c.domain)
    }

    /// RFC 6265 §5.1.4.
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return cookiePath.hasSuffix("/") || requestPath.dropFirst(cookiePath.count).hasPrefix("/")
    }
}
