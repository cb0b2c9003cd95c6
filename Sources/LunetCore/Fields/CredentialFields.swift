import Glibc
import Synchronization

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
    /// Besides the generic words, the names real APIs give their keys: Azure API Management's
    /// Ocp-Apim-Subscription-Key, Azure Functions' x-functions-key, OpenStack Swift's and
    /// Cloudflare's X-Auth-Key, Swift's X-Storage-Pass, Cosmos DB's master and account keys.
    static let words: [[UInt8]] = ["authorization", "authentication", "cookie", "token", "secret", "password", "passwd",
                                   "passphrase", "apikey", "accesskey", "privatekey", "credential", "sessionid", "signature",
                                   "authkey", "subscriptionkey", "functionskey", "masterkey", "accountkey", "storagepass",
                                   "licensekey"].map { Array($0.utf8) }
    /// Short names that are credentials only on their own ("sig": a shared access signature's
    /// query parameter, Azure Storage's).
    static let exact: [[UInt8]] = ["auth", "pwd", "pass", "sid", "key", "jwt", "otp", "sig"].map { Array($0.utf8) }

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
                if containsWord(normal) { return true }
                return declared.isEmpty ? false : declared.contains(Array(normal))
            }
        }
    }

    /// Declares `name` a credential's for the rest of the process, wherever it appears: a
    /// session's own names for its keys (`secret_names`, an API key's field), which no word
    /// above reveals. The cache, redirects and everything lunet prints treat it as the rest.
    public static func declare(_ name: String) {
        let normal = Array(name.utf8.filter { $0 != 0x2D && $0 != 0x5F && $0 != 0x2E && $0 != 0x20 }.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 })
        guard !normal.isEmpty else { return }
        declared.insert(normal)
    }

    /// The names declared so far, normalised as `isCredential` compares them.
    private static let declared = DeclaredNames()

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

/// The declared names behind a lock (every loop asks; a script declares). `isEmpty` is read
/// without the lock first: most programs declare none, and the common answer costs a load.
private final class DeclaredNames: @unchecked Sendable {
    private var names = Set<[UInt8]>()
    private let count = Atomic<Int>(0)
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    var isEmpty: Bool { count.load(ordering: .acquiring) == 0 }
    func insert(_ name: [UInt8]) {
        pthread_mutex_lock(&mutex)
        names.insert(name)
        count.store(names.count, ordering: .releasing)
        pthread_mutex_unlock(&mutex)
    }
    func contains(_ name: [UInt8]) -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return names.contains(name)
    }
}
