import Glibc

/// The proxy a request goes through, as libcurl 7.88 chooses it, so that an error at the proxy
/// can say so (a dead proxy otherwise reads "Failed to connect to 127.0.0.1 port 3128", as if the
/// server were down). Pure: the environment is passed in.
public enum ProxyInEffect {
    /// The request's `proxy` option ("" is none) when it has one; else the environment's:
    /// `http_proxy` for http (never `HTTP_PROXY`, which CGI programs get from a request's
    /// `Proxy:` header), `https_proxy` or `HTTPS_PROXY` for https, then `all_proxy` or
    /// `ALL_PROXY`. Either way none when `no_proxy` (or `NO_PROXY`) names the host: libcurl
    /// reads it for a proxy given as an option too, as curl -x does.
    public static func proxy(for url: String, option: String?, environment: (String) -> String?) -> String? {
        if option == "" { return nil }
        let parsed = URLReference(parsing: url)
        let scheme = parsed.scheme?.lowercased() ?? "http"
        let host = hostOf(parsed.authority ?? "").lowercased()
        if let list = environment("no_proxy") ?? environment("NO_PROXY"), noProxy(list, names: host) { return nil }
        if let option { return option }
        let names = scheme == "https" ? ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] : ["http_proxy", "all_proxy", "ALL_PROXY"]
        for name in names {
            if let value = environment(name), !value.isEmpty { return value }
        }
        return nil
    }

    /// Whether a `no_proxy` list names `host`: `*` names every host; an entry names itself and,
    /// for a domain, every name under it (a leading dot is optional).
    public static func noProxy(_ list: String, names host: String) -> Bool {
        let host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        for raw in list.split(separator: ",") {
            var entry = raw.trimmingCharacters(in: " \t").lowercased()
            if entry == "*" { return true }
            if entry.hasPrefix(".") { entry.removeFirst() }
            if entry.isEmpty { continue }
            if host == entry || host.hasSuffix("." + entry) { return true }
        }
        return false
    }

    /// The host of an authority ("user@host:port", "[::1]:8080"): no userinfo, no port.
    static func hostOf(_ authority: String) -> String {
        var a = Substring(authority)
        if let at = a.lastIndex(of: "@") { a = a[a.index(after: at)...] }
        if a.hasPrefix("["), let close = a.firstIndex(of: "]") { return String(a[...close]) }
        if let colon = a.firstIndex(of: ":") { a = a[..<colon] }
        return String(a)
    }

    /// A proxy URL for a message: its password, if any, masked.
    public static func shown(_ proxy: String) -> String {
        guard let at = proxy.lastIndex(of: "@") else { return proxy }
        // After "scheme://" when there is one ("user:pw@host:3128" has none).
        var start = proxy.startIndex
        let u = Array(proxy.utf8)
        if let colon = u.firstIndex(of: 0x3A), colon + 2 < u.count, u[colon + 1] == 0x2F, u[colon + 2] == 0x2F,
           !u[..<colon].contains(0x40) {
            start = proxy.utf8.index(proxy.startIndex, offsetBy: colon + 3)
        }
        guard start < at else { return proxy }
        let userinfo = proxy[start..<at]
        guard let colon = userinfo.firstIndex(of: ":") else { return proxy }
        return String(proxy[..<proxy.index(after: colon)]) + "***" + String(proxy[at...])
    }

    /// The process's environment, for `proxy(for:option:environment:)`.
    public static func processEnvironment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}
