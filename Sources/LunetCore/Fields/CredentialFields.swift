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
    static let exact: [[UInt8]] = ["auth", "pwd", "pass", "sid", "key", "jwt", "otp"].map { Array($0.utf8) }

    /// True when a header, parameter or key name names a credential. The name is compared in
    /// ASCII lower case without - _ . and spaces, made on the stack: a request's every own field
    /// is asked about, and an array made for each was most of the cost.
    public static func isCredential(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { raw in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(raw.count, 1)) { buffer in
                var n = 0
                for c in raw where c != 0x2D && c != 0x5F && c != 0x2E && c != 0x20 {
                    buffer[n] = c >= 0x41 && c <= 0x5A ? c | 0x20 : c
                    n += 1
                }
                let normal = UnsafeBufferPointer(rebasing: buffer[0..<n])
                if exact.contains(where: { $0.count == n && $0.elementsEqual(normal) }) { return true }
                return containsWord(normal)
            }
        }
    }

    /// The words by their first byte (a, c, p, s, t): one pass over the name looks only at the
    /// words that can start where it is.
    static let wordsByFirstByte: [UInt8: [[UInt8]]] = Dictionary(grouping: words) { $0[0] }
    static let firstBytes: [Bool] = (0..<256).map { wordsByFirstByte[UInt8($0)] != nil }

    private static func containsWord(_ h: UnsafeBufferPointer<UInt8>) -> Bool {
        let starts = firstBytes
        for i in 0..<h.count where starts[Int(h[i])] {
            for w in wordsByFirstByte[h[i]]! where w.count <= h.count - i {
                var j = 1
                while j < w.count && h[i + j] == w[j] { j += 1 }
                if j == w.count { return true }
            }
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
