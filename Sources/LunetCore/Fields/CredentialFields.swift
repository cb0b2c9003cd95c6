/// Which request fields carry credentials: decided once for what lunet keeps apart and drops.
/// The cache files a response under a digest of them (one user's answer never serves another:
/// RFC 9111 §3.5), and a redirect to another origin goes without them (as curl drops
/// Authorization and Cookie). lua/lunet/secrets.lua masks the same names in what lunet prints
/// (it asks this type, through core.is_secret_name).
///
/// A name is a credential's by what it contains, not by a short list of exact names:
/// "X-Api-Key", "api_key", "access_token", "X-Amz-Security-Token", "session_id" all are. Names
/// are compared lower-cased, without "-", "_", "." and spaces.
public enum CredentialFields {
    /// Words that make a name a credential's wherever they appear in it.
    static let words: [[UInt8]] = ["authorization", "authentication", "cookie", "token", "secret", "password", "passwd",
                                   "passphrase", "apikey", "accesskey", "privatekey", "credential", "sessionid", "signature"].map { Array($0.utf8) }
    /// Short names that are credentials only on their own.
    static let exact: Set<[UInt8]> = Set(["auth", "pwd", "pass", "sid", "key", "jwt", "otp"].map { Array($0.utf8) })

    /// The name as compared: ASCII lower case, without - _ . and spaces.
    static func normal(_ name: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(name.utf8.count)
        for c in name.utf8 where c != 0x2D && c != 0x5F && c != 0x2E && c != 0x20 {
            out.append(c >= 0x41 && c <= 0x5A ? c | 0x20 : c)
        }
        return out
    }

    /// True when a header, parameter or key name names a credential.
    public static func isCredential(_ name: String) -> Bool {
        let n = normal(name)
        if exact.contains(n) { return true }
        return words.contains { contains(n, $0) }
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        var i = 0
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0] {
                var j = 1
                while j < needle.count && haystack[i + j] == needle[j] { j += 1 }
                if j == needle.count { return true }
            }
            i += 1
        }
        return false
    }

    /// Credential fields that stay with the request on a redirect to another origin: they are
    /// for the proxy, which a redirect does not change.
    static func staysWithProxy(_ name: String) -> Bool { name.caseInsensitiveEquals("Proxy-Authorization") }

    /// The values of every credential field of `request` (Authorization, Cookie, API keys, any
    /// name `isCredential` takes, the header its auth declared), and the cookies its jar adds,
    /// one line each in a fixed order; "" when it carries none. Two requests that differ here
    /// may get different answers: the cache keeps them apart by a digest of it.
    public static func material(_ request: HTTPRequest) -> String {
        let declared = request.options.secretHeader
        // A SigV4 signature changes every second (it signs the date): the keys stand for it.
        let signed = request.options.awsCredentials
        var lines: [String] = []
        for (name, value) in request.headers.fields where isCredential(name) || (declared.map(name.caseInsensitiveEquals) ?? false) {
            if signed != nil && name.caseInsensitiveEquals("Authorization") { continue }
            lines.append(name.lowercased() + ":" + value)
        }
        if let keys = signed { lines.append("aws-sigv4:" + keys.provider + ":" + keys.key + ":" + keys.secret) }
        // Sorted by name only (a stable sort): repeated fields keep their order, which matters.
        var text = lines.enumerated().sorted { a, b in
            let (na, nb) = (a.element.prefix { $0 != ":" }, b.element.prefix { $0 != ":" })
            return na != nb ? na < nb : a.offset < b.offset
        }.map(\.element).joined(separator: "\n")
        if let jar = request.jarCookies, !jar.isEmpty { text += (text.isEmpty ? "" : "\n") + "jar-cookie:" + jar }
        return text
    }

    /// Whether any field of `headers` (or `extra`, a name the request's auth declared secret)
    /// is a credential's.
    public static func anyCredential(in headers: HTTPHeaders, declared extra: String? = nil) -> Bool {
        headers.fields.contains { isCredential($0.name) || (extra.map($0.name.caseInsensitiveEquals) ?? false) }
    }
}
