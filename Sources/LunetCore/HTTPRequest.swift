/// What to send. Built by the Lua layer or by Swift callers, completed by a session
/// (base URL, shared headers, auth, defaults) before the loop starts it.
public struct HTTPRequest {
    public enum Body {
        case none
        case bytes(ByteBuffer)
        /// multipart/form-data; file parts are streamed from disk while the request is sent.
        case multipart([MultipartPart])
        /// A file's contents, read in chunks while the request is sent (an upload).
        case file(String)
        /// Pieces given while the transfer runs (Transfer.sendPiece, closeSending), of a length
        /// not known in advance: gRPC's client and bidirectional streams (Transfer+Send.swift).
        case stream
    }

    public var method: String
    public var url: String
    public var headers: HTTPHeaders
    public var body: Body
    public var options: TransferOptions
    /// Header names not to send, even those the session or lunet would add (User-Agent).
    public var removedHeaders: [String]
    /// How the session's cache may answer (nil: the standard rules).
    public var cachePolicy: CachePolicy?
    /// When `only_if_cached` (the policy or the request directive) finds nothing: answer with a
    /// synthesized 504 response (RFC 9111 §5.2.1.7) instead of failing with kind `offline`.
    public var offlineMissResponse: Bool
    /// The Cookie pairs the session's jar adds to this request (CookieMatch), set only where a
    /// cache must tell cookie holders apart (Session+Cache); nil otherwise.
    public var jarCookies: String?
    /// A connection that lives as long as its consumer wants (an event stream): it runs on the
    /// loop's stream pool, which no connection cap limits, and no session's max_concurrent line
    /// holds it (StreamPool.swift).
    public var longLived: Bool

    // Every stored property set here, none by a default on its declaration: with defaults the
    // optimized init built the request, copied it (a retain of each field) and destroyed the
    // first one (a release of each), ~0.4k instructions of every request.
    public init(method: String = "GET", url: String, headers: HTTPHeaders = HTTPHeaders(), body: Body = .none, options: TransferOptions = TransferOptions(),
                removedHeaders: [String] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.options = options
        self.removedHeaders = removedHeaders
        self.cachePolicy = nil
        self.offlineMissResponse = false
        self.jarCookies = nil
        self.longLived = false
    }

    /// Whether the request decides header `name` itself: it sets it, or removes it.
    func decides(header name: String) -> Bool {
        headers.contains(name) || removedHeaders.contains(where: { $0.caseInsensitiveEquals(name) })
    }

    public var bodyCount: Int {
        if case .bytes(let b) = body { return b.count }
        return 0
    }
}

/// One part of a multipart/form-data body.
public struct MultipartPart {
    public enum Content {
        case bytes(ByteBuffer)
        case file(String)
    }
    public var name: String
    public var content: Content
    public var filename: String?
    public var contentType: String?

    public init(name: String, content: Content, filename: String? = nil, contentType: String? = nil) {
        self.name = name
        self.content = content
        self.filename = filename
        self.contentType = contentType
    }
}

public enum HTTPVersionPreference: String, Sendable {
    case http1_0 = "1.0", http1_1 = "1.1", http2 = "2", http2PriorKnowledge = "2-prior-knowledge"
    /// HTTP/3 tried first, with HTTP/2 and 1.1 over TCP raced beside it (curl --http3);
    /// HTTP/3 or nothing (curl --http3-only). Both need a libcurl built with HTTP/3.
    case http3 = "3", http3Only = "3-only"

    /// Asks for HTTP/3: refused at once on a libcurl without it (Transfer.configure).
    public var isHTTP3: Bool { self == .http3 || self == .http3Only }
}

/// Credentials libcurl uses itself: to answer a server's challenge (Digest, NTLM, Negotiate).
/// (AWS Signature Version 4 is lunet's own: AWSSigV4.swift.)
public struct CurlAuth: Sendable, Equatable {
    public enum Scheme: Sendable, Equatable {
        case digest, ntlm, negotiate

        public var name: String {
            switch self {
            case .digest: return "Digest"
            case .ntlm: return "NTLM"
            case .negotiate: return "Negotiate"
            }
        }
    }
    public var scheme: Scheme
    public var user: String
    public var password: String
    public init(_ scheme: Scheme, user: String, password: String) {
        self.scheme = scheme
        self.user = user
        self.password = password
    }
}

/// What TransferOptions keeps behind a reference (see `rare` there).
struct RareTransferOptions: Sendable, Equatable {
    var curlAuth: CurlAuth?
    /// SigV4 keys: the request is signed with them, again after a redirect within its origin.
    var awsCredentials: AWSCredentials?
    var secretHeader: String?
    /// A gRPC call's max_message: each message's length prefix is checked as the body arrives
    /// (GRPCFrameGuard).
    var grpcMaxMessage: Int?
    var clientCertificate: String?
    var clientKey: String?
    var clientKeyPassword: String?
    var netrcFile: String?
    var caFile: String?
    var proxy: String?

    func resolved(over d: RareTransferOptions) -> RareTransferOptions {
        var r = d
        if let caFile { r.caFile = caFile }
        if let proxy { r.proxy = proxy }
        if let curlAuth { r.curlAuth = curlAuth }
        if let awsCredentials { r.awsCredentials = awsCredentials }
        if let secretHeader { r.secretHeader = secretHeader }
        if let grpcMaxMessage { r.grpcMaxMessage = grpcMaxMessage }
        if let clientCertificate { r.clientCertificate = clientCertificate }
        if let clientKey { r.clientKey = clientKey }
        if let clientKeyPassword { r.clientKeyPassword = clientKeyPassword }
        if let netrcFile { r.netrcFile = netrcFile }
        return r
    }
}

/// An immutable box: a copy of TransferOptions shares it; a change makes a new one.
final class RareTransferOptionsBox: Sendable, Equatable {
    let value: RareTransferOptions
    init(_ value: RareTransferOptions) { self.value = value }
    static func == (a: RareTransferOptionsBox, b: RareTransferOptionsBox) -> Bool { a === b || a.value == b.value }
}

/// How a transfer is made. Every field is optional so that a request's options can be laid over
/// its session's; `resolved(over:)` does that.
public struct TransferOptions: Sendable, Equatable {
    public var timeout: Double?
    public var connectTimeout: Double?
    public var followRedirects: Bool?
    public var maxRedirects: Int?
    public var maxBody: Int?
    public var insecure: Bool?
    public var httpVersion: HTTPVersionPreference?
    public var decompress: Bool?
    /// The options few requests set (below), behind one reference: TransferOptions is copied
    /// several times per request, and six more optional fields inline cost every cache hit
    /// ~1.7k instructions (callgrind), 5% of it. The strings (a CA file, a proxy) too: a
    /// String field is a retain at every copy and a release at every destroy, ~0.6k
    /// instructions of a plain request for these two.
    private var rare: RareTransferOptionsBox?
    /// Keep the request head as libcurl sent it (HAR recordings; see Transfer.capturesSentHead).
    public var recordsSentHead: Bool?
    /// The request carries credentials and follows redirects: lunet follows them itself, so
    /// that no credential reaches another origin (RedirectPolicy). Set by Session.prepare,
    /// never by a caller; part of a handle's profile (libcurl's FOLLOWLOCATION differs).
    var followsRedirectsItself = false

    public init() {}

    private var rareOptions: RareTransferOptions {
        get { rare?.value ?? RareTransferOptions() }
        set { rare = newValue == RareTransferOptions() ? nil : RareTransferOptionsBox(newValue) }
    }
    /// Digest, NTLM or Negotiate credentials (libcurl sends the request, reads the server's
    /// challenge and sends it again with the answer), or AWS SigV4 keys (libcurl signs it).
    public var curlAuth: CurlAuth? {
        get { rare?.value.curlAuth }
        set { rareOptions.curlAuth = newValue }
    }
    /// AWS SigV4 keys the request is signed with (AWSSigV4.swift).
    public var awsCredentials: AWSCredentials? {
        get { rare?.value.awsCredentials }
        set { rareOptions.awsCredentials = newValue }
    }
    /// A request field that carries a credential (a session's API key header): the cache keeps
    /// responses to different values of it apart, as it does for Authorization.
    public var secretHeader: String? {
        get { rare?.value.secretHeader }
        set { rareOptions.secretHeader = newValue }
    }
    /// A gRPC call's max_message, checked against each length prefix as the body arrives.
    public var grpcMaxMessage: Int? {
        get { rare?.value.grpcMaxMessage }
        set { rareOptions.grpcMaxMessage = newValue }
    }
    /// A client certificate (PEM), its private key when not in the same file, and the key's
    /// passphrase: for servers that ask the client to prove who it is (mutual TLS).
    public var clientCertificate: String? {
        get { rare?.value.clientCertificate }
        set { rareOptions.clientCertificate = newValue }
    }
    public var clientKey: String? {
        get { rare?.value.clientKey }
        set { rareOptions.clientKey = newValue }
    }
    public var clientKeyPassword: String? {
        get { rare?.value.clientKeyPassword }
        set { rareOptions.clientKeyPassword = newValue }
    }
    /// A .netrc file whose entry for the request's host gives the credentials when the request
    /// carries none of its own (curl's --netrc-optional); "" turns a session's off.
    public var netrcFile: String? {
        get { rare?.value.netrcFile }
        set { rareOptions.netrcFile = newValue }
    }
    /// The CA certificates (PEM) to check the server with, instead of the system's.
    public var caFile: String? {
        get { rare?.value.caFile }
        set { rareOptions.caFile = newValue }
    }
    /// The proxy to send through ("" for none, over the environment's).
    public var proxy: String? {
        get { rare?.value.proxy }
        set { rareOptions.proxy = newValue }
    }

    /// Nothing set: a request made without options (most of them).
    var isEmpty: Bool {
        timeout == nil && connectTimeout == nil && followRedirects == nil && maxRedirects == nil && maxBody == nil
            && insecure == nil && httpVersion == nil && decompress == nil && rare == nil
            && recordsSentHead == nil
    }

    /// Ours where set, else `defaults`'.
    public func resolved(over defaults: TransferOptions) -> TransferOptions {
        if isEmpty { return defaults }   // no copy made to be overwritten field by field
        var r = defaults
        if let timeout { r.timeout = timeout }
        if let connectTimeout { r.connectTimeout = connectTimeout }
        if let followRedirects { r.followRedirects = followRedirects }
        if let maxRedirects { r.maxRedirects = maxRedirects }
        if let maxBody { r.maxBody = maxBody }
        if let insecure { r.insecure = insecure }
        if let httpVersion { r.httpVersion = httpVersion }
        if let decompress { r.decompress = decompress }
        if let mine = rare {
            r.rare = r.rare.map { RareTransferOptionsBox(mine.value.resolved(over: $0.value)) } ?? mine
        }
        if let recordsSentHead { r.recordsSentHead = recordsSentHead }
        return r
    }

    /// The defaults a new session starts from; documented in docs/http.md.
    public static let standard: TransferOptions = {
        var o = TransferOptions()
        o.followRedirects = true
        o.maxRedirects = 10
        o.maxBody = 100 * 1024 * 1024
        o.insecure = false
        o.decompress = true
        return o
    }()
}
