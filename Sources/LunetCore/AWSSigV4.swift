import Glibc

/// AWS Signature Version 4 keys: libcurl signs each request with them (CURLOPT_AWS_SIGV4).
public struct AWSCredentials: Sendable, Equatable {
    /// libcurl's provider string: "aws:amz:REGION:SERVICE".
    public var provider: String
    public var key: String
    public var secret: String
    /// The session token of temporary credentials, sent (and signed) as X-Amz-Security-Token.
    public var token: String?

    public init(provider: String, key: String, secret: String, token: String? = nil) {
        self.provider = provider
        self.key = key
        self.secret = secret
        self.token = token
    }

    /// The provider's last part: "s3", "execute-api", ...
    public var service: String { provider.split(separator: ":", omittingEmptySubsequences: false).last.map(String.init) ?? "" }
}

/// AWS Signature Version 4, computed by lunet. libcurl 7.88's CURLOPT_AWS_SIGV4 signs the path
/// as it is written, while AWS (and botocore, its reference client) canonicalise it for every
/// service but S3: dot segments and empty segments removed, then every byte but the unreserved
/// ones and "/" percent-encoded once more (a path's own %XX is encoded twice). No URL libcurl
/// could send would then sign the way AWS checks a path with @ : + * ! ' ( ) $ & = , ; or //
/// (403). So lunet signs every request itself, as botocore does: the canonical request
/// (method, path, query, the signed fields, the payload's hash), the string to sign, the key
/// derived from the secret by HMAC-SHA256, and the Authorization field, with X-Amz-Date (and
/// X-Amz-Security-Token for temporary credentials, X-Amz-Content-Sha256 for S3).
///
/// The signature covers `host`, `content-type` and `content-md5` when present, the date
/// field and every `x-amz-*` field: what libcurl or a proxy may add later (Accept-Encoding,
/// Expect, User-Agent) is left out of it, as botocore leaves such fields out.
public enum AWSSigV4 {
    static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// What "aws:amz:us-east-1:s3" (libcurl's provider string, provider1:provider2:region:
    /// service) stands for.
    struct Provider: Equatable {
        var algorithm: String      // AWS4-HMAC-SHA256
        var keyPrefix: String      // AWS4
        var terminator: String     // aws4_request
        var dateField: String      // X-Amz-Date
        var region: String
        var service: String
    }

    /// The provider's parts; region and service, when the string leaves them out, from a host
    /// named SERVICE.REGION.amazonaws.com (as libcurl takes them).
    static func provider(_ text: String, host: String) throws(LunetError) -> Provider {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw LunetError(.argument, "aws_sigv4 provider '\(text)' must be like aws:amz:REGION:SERVICE")
        }
        let labels = host.split(separator: ".").map(String.init)
        let region = parts.count > 2 && !parts[2].isEmpty ? parts[2] : (labels.count >= 3 ? labels[1] : "")
        let service = parts.count > 3 && !parts[3].isEmpty ? parts[3] : (labels.first ?? "")
        guard !region.isEmpty, !service.isEmpty else {
            throw LunetError(.argument, "aws_sigv4 provider '\(text)' names no region and service, and the host '\(host)' gives none: use aws:amz:REGION:SERVICE")
        }
        let p1 = parts[0], p2 = parts[1]
        return Provider(algorithm: p1.uppercased() + "4-HMAC-SHA256", keyPrefix: p1.uppercased() + "4", terminator: p1.lowercased() + "4_request",
                        dateField: "X-" + p2.prefix(1).uppercased() + p2.dropFirst().lowercased() + "-Date", region: region, service: service)
    }

    /// Signs `r` for the first time: its credentials go with it (a redirect within the origin
    /// is signed again: Transfer+Redirects.swift), S3's path is sent in its canonical form.
    static func prepare(_ r: inout HTTPRequest, _ c: AWSCredentials) throws(LunetError) {
        r.options.awsCredentials = c
        if c.service == "s3" { r.url = canonicalURL(r.url, encodePath: true) }
        try sign(&r, c, now: HTTPDate.currentTime())
    }

    /// Signs `r` at `now` (seconds since 1970): sets the date field, the token, S3's payload
    /// hash and Authorization, replacing any from an earlier signing.
    static func sign(_ r: inout HTTPRequest, _ c: AWSCredentials, now: Double) throws(LunetError) {
        let target = URLReference(parsing: r.url)
        guard let authority = target.authority else { throw LunetError(.argument, "aws_sigv4 needs an absolute URL", url: r.url) }
        let host = hostField(authority, scheme: target.scheme?.lowercased() ?? "http")
        let p = try provider(c.provider, host: host)
        let s3 = p.service == "s3"
        r.headers.remove("Authorization")
        // A date field the request gives is the one signed with (as libcurl did), else now's.
        let date = r.headers[p.dateField] ?? timestamp(now)
        r.headers.set(p.dateField, date)
        if let token = c.token, !token.isEmpty {
            if let problem = HeaderFieldRules.problem(name: "X-Amz-Security-Token", value: token, url: r.url) { throw problem }
            r.headers.set("X-Amz-Security-Token", token)
        }
        let hash: String
        if let given = r.headers["X-Amz-Content-Sha256"] {
            hash = given
        } else {
            hash = try payloadHash(r, s3: s3)
            if s3 { r.headers.set("X-Amz-Content-Sha256", hash) }
        }
        var fields: [(String, String)] = [("host", r.headers["Host"] ?? host)]
        for (name, value) in r.headers.fields {
            let lower = name.lowercased()
            if lower == "content-type" || lower == "content-md5" || lower.hasPrefix("x-amz-") || lower == p.dateField.lowercased() {
                fields.append((lower, value))
            }
        }
        let path = s3 ? (target.path.isEmpty ? "/" : target.path) : canonicalPath(target.path)
        let (canonical, signed) = canonicalRequest(method: r.method, path: path, query: target.query, fields: fields, payloadHash: hash)
        let scope = [String(date.prefix(8)), p.region, p.service, p.terminator].joined(separator: "/")
        let stringToSign = [p.algorithm, date, scope, hex(sha256(Array(canonical.utf8)))].joined(separator: "\n")
        var key = Array((p.keyPrefix + c.secret).utf8)
        for part in [String(date.prefix(8)), p.region, p.service, p.terminator] { key = SHA256.hmac(key: key, Array(part.utf8)) }
        let signature = hex(SHA256.hmac(key: key, Array(stringToSign.utf8)))
        r.headers.set("Authorization", "\(p.algorithm) Credential=\(c.key)/\(scope), SignedHeaders=\(signed), Signature=\(signature)")
    }

    /// The canonical request and its SignedHeaders list. `fields`: lower-case names with their
    /// values as sent (repeated names join with commas, runs of blanks become one space).
    static func canonicalRequest(method: String, path: String, query: String?, fields: [(String, String)], payloadHash: String)
        -> (String, signedHeaders: String) {
        var byName: [String: [String]] = [:]
        for (name, value) in fields { byName[name, default: []].append(value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")) }
        let names = byName.keys.sorted()
        let lines = names.map { $0 + ":" + byName[$0]!.joined(separator: ",") }
        let signed = names.joined(separator: ";")
        let text = [method.uppercased(), path, canonicalQuery(query), lines.joined(separator: "\n") + "\n", signed, payloadHash].joined(separator: "\n")
        return (text, signed)
    }

    /// A path as every service but S3 canonicalises it: dot segments and empty segments
    /// removed (botocore's rule: AWS wants consecutive slashes gone), then encoded once more.
    static func canonicalPath(_ raw: String) -> String {
        if raw.isEmpty { return "/" }
        var out: [Substring] = []
        for segment in raw.split(separator: "/", omittingEmptySubsequences: true) where segment != "." {
            if segment == ".." { if !out.isEmpty { out.removeLast() } } else { out.append(segment) }
        }
        var path = (raw.hasPrefix("/") ? "/" : "") + out.joined(separator: "/")
        if raw.hasSuffix("/") && !out.isEmpty { path += "/" }
        return PercentEncoding.encode(path, keepingSlash: true)
    }

    /// The query as SigV4 wants it: each name and value decoded and encoded again (every byte
    /// but A-Z a-z 0-9 - _ . ~), sorted by name, then value; "=" always.
    static func canonicalQuery(_ query: String?) -> String {
        guard let query, !query.isEmpty else { return "" }
        return query.split(separator: "&").map { item -> (String, String) in
            let eq = item.firstIndex(of: "=") ?? item.endIndex
            let value = eq < item.endIndex ? item[item.index(after: eq)...] : ""
            return (PercentEncoding.encode(bytes: PercentEncoding.decode(item[..<eq])), PercentEncoding.encode(bytes: PercentEncoding.decode(value)))
        }.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }.map { $0.0 + "=" + $0.1 }.joined(separator: "&")
    }

    /// The Host field libcurl sends for `authority`: without user information, without the
    /// scheme's default port.
    static func hostField(_ authority: String, scheme: String) -> String {
        var a = Substring(authority)
        if let at = a.lastIndex(of: "@") { a = a[a.index(after: at)...] }
        if let colon = a.lastIndex(of: ":"), !a[colon...].contains("]") {
            let port = a[a.index(after: colon)...]
            if port.isEmpty || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") { a = a[..<colon] }
        }
        return String(a)
    }

    private static func payloadHash(_ r: HTTPRequest, s3: Bool) throws(LunetError) -> String {
        switch r.body {
        case .file(let path):
            guard let h = SHA256.file(path) else { throw LunetError(.io, "cannot read \(path) to sign it for aws_sigv4", url: r.url) }
            return h
        case .multipart:
            // Built by libcurl after signing, with a boundary of its own: its hash is not known
            // here. S3 takes an unsigned payload; other services want the hash.
            guard s3 else {
                throw LunetError(.argument, "aws_sigv4 cannot sign a multipart body for this service (its hash is needed before libcurl builds it): send the body as bytes", url: r.url)
            }
            return unsignedPayload
        case .stream:
            // Pieces given while it is sent: no hash of the whole exists when it is signed.
            guard s3 else {
                throw LunetError(.argument, "aws_sigv4 cannot sign a body sent in pieces for this service: send it as bytes", url: r.url)
            }
            return unsignedPayload
        case .bytes(let b):
            return hex(sha256(b.base.map { Array(UnsafeRawBufferPointer(start: $0, count: b.count)) } ?? []))
        case .none:
            return hex(sha256([]))
        }
    }

    /// "20150830T123600Z".
    static func timestamp(_ now: Double) -> String {
        var t = time_t(now)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    private static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var h = SHA256()
        h.update(bytes)
        return h.digest()
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The URL with S3's path in its canonical form (segments encoded once, "/" kept), which
    /// S3 signs as it receives it. The query is sent as written (its canonical form is only
    /// signed).
    static func canonicalURL(_ url: String, encodePath: Bool) -> String {
        var rest = Substring(url)
        var tail: Substring = ""
        if let q = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { tail = rest[q...]; rest = rest[..<q] }
        guard encodePath, let colon = rest.firstIndex(of: ":") else { return url }
        let afterScheme = rest[(rest.index(colon, offsetBy: 3, limitedBy: rest.endIndex) ?? rest.endIndex)...]
        guard let slash = afterScheme.firstIndex(of: "/") else { return url }
        return String(rest[..<slash]) + PercentEncoding.encode(bytes: PercentEncoding.decode(afterScheme[slash...]), keepingSlash: true) + tail
    }
}

/// RFC 3986 percent-encoding: every byte but the unreserved A-Z a-z 0-9 - _ . ~ as %XX.
enum PercentEncoding {
    private static let hex = Array("0123456789ABCDEF".utf8)

    static func encode<S: StringProtocol>(_ text: S, keepingSlash: Bool = false) -> String {
        encode(bytes: text.utf8, keepingSlash: keepingSlash)
    }

    static func encode<C: Sequence<UInt8>>(bytes: C, keepingSlash: Bool = false) -> String {
        var out: [UInt8] = []
        for c in bytes {
            switch c {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x5F, 0x2E, 0x7E: out.append(c)
            case 0x2F where keepingSlash: out.append(c)
            default: out += [0x25, hex[Int(c >> 4)], hex[Int(c & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// %XX sequences to their bytes ("+" stays "+": in a URL it is not a space to AWS).
    static func decode<S: StringProtocol>(_ text: S) -> [UInt8] {
        let b = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var i = 0
        while i < b.count {
            if b[i] == 0x25, i + 2 < b.count, let hi = hexValue(b[i + 1]), let lo = hexValue(b[i + 2]) {
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(b[i])
                i += 1
            }
        }
        return out
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }
}
