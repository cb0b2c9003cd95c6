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

/// What a request needs, besides libcurl's signature, for AWS to compute the same one. libcurl
/// 7.88 signs the URL's query and path as they are written and hashes only an in-memory body;
/// AWS canonicalises the query (sorted, re-encoded) and path, and S3 wants the payload's hash in
/// a field. So the URL is sent in its canonical form, and the hash is given where libcurl would
/// get it wrong (it signs with an X-Amz-Content-Sha256 field's value when there is one).
enum AWSSigV4 {
    static let unsignedPayload = "UNSIGNED-PAYLOAD"

    static func prepare(_ r: inout HTTPRequest, _ c: AWSCredentials) throws(LunetError) {
        r.options.curlAuth = CurlAuth(.awsSigV4(provider: c.provider), user: c.key, password: c.secret)
        let s3 = c.service == "s3"
        r.url = canonicalURL(r.url, encodePath: s3)
        if let token = c.token, !token.isEmpty, !r.headers.contains("X-Amz-Security-Token") {
            if let problem = HeaderFieldRules.problem(name: "X-Amz-Security-Token", value: token, url: r.url) { throw problem }
            r.headers.set("X-Amz-Security-Token", token)
        }
        guard !r.headers.contains("X-Amz-Content-Sha256") else { return }
        var hash: String?
        switch r.body {
        case .file(let path):
            // libcurl would sign a streamed upload as an empty body.
            guard let h = SHA256.file(path) else {
                throw LunetError(.io, "cannot read \(path) to sign it for aws_sigv4", url: r.url)
            }
            hash = h
        case .multipart:
            hash = s3 ? unsignedPayload : nil   // only S3 takes an unsigned payload
        case .bytes(let b):
            if s3 { hash = sha256(b.base.map { UnsafeRawBufferPointer(start: $0, count: b.count) }) }
        case .none:
            if s3 { hash = sha256(nil) }
        }
        if let hash { r.headers.set("X-Amz-Content-Sha256", hash) }
    }

    private static func sha256(_ bytes: UnsafeRawBufferPointer?) -> String {
        var h = SHA256()
        if let bytes { h.update(bytes) }
        return h.finalize()
    }

    /// The URL with its query in SigV4's canonical form (each name and value percent-decoded and
    /// encoded again, every byte but A-Z a-z 0-9 - _ . ~; sorted by name, then value; "=" always),
    /// and for S3 its path too (segments encoded once, "/" kept). Servers read the same
    /// parameters and path from it.
    static func canonicalURL(_ url: String, encodePath: Bool) -> String {
        var rest = Substring(url)
        var fragment: Substring = ""
        if let hash = rest.firstIndex(of: "#") { fragment = rest[hash...]; rest = rest[..<hash] }
        var query: Substring?
        if let q = rest.firstIndex(of: "?") { query = rest[rest.index(after: q)...]; rest = rest[..<q] }
        var out = String(rest)
        // An absolute URL (the session resolved it): scheme "://" authority path.
        if encodePath, let colon = rest.firstIndex(of: ":") {
            let afterScheme = rest[(rest.index(colon, offsetBy: 3, limitedBy: rest.endIndex) ?? rest.endIndex)...]
            if let slash = afterScheme.firstIndex(of: "/") {
                out = String(rest[..<slash]) + PercentEncoding.encode(bytes: PercentEncoding.decode(afterScheme[slash...]), keepingSlash: true)
            }
        }
        if let query {
            let pairs = query.split(separator: "&").map { item -> (String, String) in
                let eq = item.firstIndex(of: "=") ?? item.endIndex
                let value = eq < item.endIndex ? item[item.index(after: eq)...] : ""
                return (PercentEncoding.encode(bytes: PercentEncoding.decode(item[..<eq])), PercentEncoding.encode(bytes: PercentEncoding.decode(value)))
            }.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
            out += "?" + pairs.map { $0.0 + "=" + $0.1 }.joined(separator: "&")
        }
        return out + fragment
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
