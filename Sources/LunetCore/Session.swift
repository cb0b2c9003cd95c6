/// The session manager: configuration shared by a family of requests (base URL, headers, auth,
/// timeouts, TLS, proxy), a cookie jar, and the loop whose connection pool its transfers reuse.
public final class Session {
    public enum Auth: Sendable {
        case basic(user: String, password: String)
        case bearer(String)
        /// Answered by libcurl when the server's 401 asks for it (a request option, not a field).
        case digest(user: String, password: String)
        case ntlm(user: String, password: String)
        /// Kerberos or NTLM through GSS-API: the credentials are the user's ticket, not ours.
        case negotiate
        /// Each request signed by lunet (AWSSigV4.swift).
        case awsSigV4(AWSCredentials)
        /// An API key in a request field, or in a query parameter added to every URL.
        case apiKeyHeader(name: String, value: String)
        case apiKeyQuery(name: String, value: String)
    }

    public struct Configuration {
        public var baseURL: String?
        public var headers = HTTPHeaders()
        public var auth: Auth?
        public var options = TransferOptions.standard
        /// At most this many transfers of this session run at once; the rest wait in a FIFO line.
        public var maxConcurrent: Int?
        /// The HTTP cache its requests go through (see Session+Cache.swift).
        public var cache: HTTPCache?
        /// The session one-shot requests (http.get) go through: the user made no session, so a
        /// relative URL is called not absolute, without talk of a base_url.
        public var isImplicit = false
        public init() {}
    }

    public let loop: EventLoop
    public var configuration: Configuration {
        didSet { setBaseHeaders() }
    }
    /// The fields every request starts from (User-Agent, the session's headers, auth), made
    /// once per configuration rather than merged again for each request.
    private var baseHeaders: HTTPHeaders
    /// Why the base fields cannot be sent (a CR or LF in a session header or a token), found
    /// once per configuration and raised by every request (HeaderFieldRules).
    private var baseHeaderProblem: LunetError?
    /// Whether the base fields carry a credential (CredentialFields): such requests follow
    /// their redirects themselves (Transfer+Redirects.swift). Found once per configuration.
    private(set) var baseHeadersCarryCredentials = false
    public let cookies: CookieJar?
    /// Transfers running under `maxConcurrent`, and those waiting for a slot, oldest first.
    private var running: Set<ObjectIdentifier> = []
    private var line: [Transfer] = []
    private var lineStart = 0
    /// GETs on the network now, by collapsing key, with the transfers waiting for the same answer.
    var inflight: [String: [Transfer]] = [:]
    /// GETs being revalidated in the background (stale-while-revalidate), by collapsing key.
    var revalidating: Set<String> = []

    /// How often this session prepared a request and looked one up in its cache: the request
    /// path's own accounting (a test checks that a miss does each once).
    /// The last URL `resolve` found plain (isPlainAbsolute), so that a run of requests to one URL
    /// checks it once.
    private var lastPlainURL = ""
    /// The last URL resolved against the base (the same path, call after call, for a gRPC
    /// method or an API's endpoint): its resolution parses both, ~10k instructions.
    private var lastResolved: (url: String, base: String, webSocket: Bool, resolved: String)?
    public private(set) var preparations = 0
    public internal(set) var cacheLookups = 0

    public var runningCount: Int { running.count }
    public var waitingCount: Int { line.count - lineStart }

    public init(loop: EventLoop, configuration: Configuration = Configuration(), cookies: CookieJar? = nil) {
        self.loop = loop
        self.configuration = configuration
        self.cookies = cookies
        self.baseHeaders = HTTPHeaders()
        setBaseHeaders()
    }

    private func setBaseHeaders() {
        baseHeaders = Self.baseHeaders(configuration)
        baseHeaderProblem = HeaderFieldRules.problem(in: baseHeaders)
        var declared: String?
        if case .apiKeyHeader(let name, _)? = configuration.auth { declared = name }
        baseHeadersCarryCredentials = CredentialFields.anyCredential(in: baseHeaders, declared: declared)
    }

    private static func baseHeaders(_ configuration: Configuration) -> HTTPHeaders {
        var headers = configuration.headers.contains("User-Agent") ? configuration.headers : Self.defaultHeaders.merging(configuration.headers)
        switch configuration.auth {
        case .basic(let user, let password)?:
            headers.set("Authorization", "Basic " + Base64.encode(Array("\(user):\(password)".utf8)))
        case .bearer(let token)?:
            headers.set("Authorization", "Bearer " + token)
        case .apiKeyHeader(let name, let value)?:
            headers.set(name, value)
        case .digest?, .ntlm?, .negotiate?, .awsSigV4?, .apiKeyQuery?, nil:
            break
        }
        return headers
    }

    deinit {
        // Requests still waiting for a slot will never start: end them as cancelled.
        for t in line[lineStart...] where t.state == .created {
            t.finish(.failure(LunetError(.cancelled, "the session was closed before the request could start", url: t.request.url)), force: true)
        }
    }

    /// A session with another configuration that shares this one's cookies and connections.
    public func derived(_ configuration: Configuration) -> Session {
        Session(loop: loop, configuration: configuration, cookies: cookies)
    }

    /// The request as it will be sent: URL resolved against the base URL, the session's headers
    /// under the request's own, auth, and the session's options under the request's.
    public func prepare(_ request: HTTPRequest) throws(LunetError) -> HTTPRequest {
        var r = request
        try prepare(&r)
        return r
    }

    /// `prepare`, in place: the request path moves its request through (`send`), with no copy of
    /// it made. On an error `r` may be prepared in part (its URL is never changed then).
    func prepare(_ r: inout HTTPRequest) throws(LunetError) {
        preparations += 1
        let own = r.headers
        r.url = try resolve(r.url)
        // Nothing that would split the request goes out: the request's own fields, the
        // session's (checked once), and what the auth adds (checked where it is added).
        if let problem = baseHeaderProblem { throw problem.at(r.url) }
        if own.count > 0 || !r.removedHeaders.isEmpty, let problem = HeaderFieldRules.problem(in: own, removed: r.removedHeaders, url: r.url) {
            throw problem
        }
        // The request's own fields replace the session's by name (its Authorization, the auth).
        r.headers = baseHeaders.merging(own)
        for name in r.removedHeaders { r.headers.remove(name) }
        r.options = r.options.resolved(over: configuration.options)
        // An API key's field is the session's, whatever the request does with Authorization:
        // it is a credential wherever it goes (the cache, redirects).
        if case .apiKeyHeader(let name, _)? = configuration.auth, r.options.secretHeader == nil { r.options.secretHeader = name }
        try applyAuth(&r, own)
        // A request that carries credentials follows its redirects in lunet, which drops them
        // on a redirect to another origin (RedirectPolicy); the rest leave it to libcurl.
        if r.options.followRedirects != false {
            r.options.followsRedirectsItself = baseHeadersCarryCredentials || r.options.curlAuth != nil || r.options.secretHeader != nil
                || r.options.awsCredentials != nil
                || (own.count > 0 && CredentialFields.anyCredential(in: own))
        }
    }

    /// The session's auth, on a request that has none of its own: a request's own
    /// Authorization replaces it, libcurl's schemes included.
    private func applyAuth(_ r: inout HTTPRequest, _ own: HTTPHeaders) throws(LunetError) {
        guard let auth = configuration.auth, r.options.curlAuth == nil, !own.contains("Authorization") else { return }
        switch auth {
        case .digest(let user, let password): r.options.curlAuth = CurlAuth(.digest, user: user, password: password)
        case .ntlm(let user, let password): r.options.curlAuth = CurlAuth(.ntlm, user: user, password: password)
        // libcurl answers Negotiate only when a user is set; the empty one means "the ticket's".
        case .negotiate: r.options.curlAuth = CurlAuth(.negotiate, user: "", password: "")
        case .awsSigV4(let credentials): try AWSSigV4.prepare(&r, credentials)
        case .apiKeyHeader: break   // its field and secretHeader: above
        case .apiKeyQuery(let name, let value): r.url = Self.addingQuery(r.url, name, value)
        case .basic, .bearer: break
        }
    }

    /// `url` with name=value added to its query (percent-encoded), unless the query has the
    /// name already (the request gave its own).
    static func addingQuery(_ url: String, _ name: String, _ value: String) -> String {
        let encodedName = PercentEncoding.encode(name)
        let fragmentStart = url.firstIndex(of: "#") ?? url.endIndex
        let head = url[..<fragmentStart]
        if let q = head.firstIndex(of: "?") {
            let query = head[head.index(after: q)...]
            if query.split(separator: "&").contains(where: { $0 == encodedName || $0.hasPrefix(encodedName + "=") }) { return url }
        }
        let separator = head.contains("?") ? (head.hasSuffix("?") || head.hasSuffix("&") ? "" : "&") : "?"
        return head + separator + encodedName + "=" + PercentEncoding.encode(value) + url[fragmentStart...]
    }

    private static let defaultHeaders = HTTPHeaders([("User-Agent", "lunet/\(Lunet.version)")])

    /// An absolute http(s) URL, or an error that names the URL. With `webSocket`, ws: and wss:
    /// (in the URL or the base URL) are taken and answered as the http: and https: they open with.
    public func resolve(_ url: String, webSocket: Bool = false) throws(LunetError) -> String {
        // The URL the last request found plain (most often the very same string: LuaHost.urlText).
        if url == lastPlainURL { return url }
        // The reference the last request resolved against this base, checked and all.
        if let last = lastResolved, last.url == url, last.webSocket == webSocket, last.base == configuration.baseURL {
            return last.resolved
        }
        if Self.isPlainAbsolute(url) {
            lastPlainURL = url
            return url
        }
        if url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7f }) {
            throw LunetError(.argument, "invalid URL '\(url)': it contains spaces or control characters (encode them)", url: url)
        }
        var target = URLReference(parsing: url)
        var againstBase: String? = nil
        if target.scheme == nil {
            guard let base = configuration.baseURL else {
                if configuration.isImplicit {
                    throw LunetError(.argument, "invalid URL '\(url)': not absolute (it needs a scheme: \(webSocket ? "ws:// or wss://" : "http:// or https://"))", url: url)
                }
                throw LunetError(.argument, "invalid URL '\(url)': not absolute, and the session has no base_url", url: url)
            }
            target = URLReference(parsing: base).resolving(url)
            againstBase = base
        }
        if webSocket, let scheme = target.scheme?.lowercased(), scheme == "ws" || scheme == "wss" {
            target.scheme = scheme == "ws" ? "http" : "https"
        }
        guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw LunetError(.argument, "invalid URL '\(url)': only http and https URLs can be requested", url: url)
        }
        guard let authority = target.authority, !authority.isEmpty, !authority.hasPrefix(":") else {
            throw LunetError(.argument, "invalid URL '\(url)': it has no host", url: url)
        }
        target.fragment = nil   // never sent
        if target.path.isEmpty { target.path = "/" }
        let resolved = target.string
        if let base = againstBase { lastResolved = (url, base, webSocket, resolved) }   // only what passed every check
        return resolved
    }

    /// The common case, checked in one pass over the bytes: "http://" or "https://", a host,
    /// then a path or nothing, no fragment, no spaces or control characters. Such a URL is sent
    /// as it is; anything else goes through full RFC 3986 resolution and checks.
    static func isPlainAbsolute(_ url: String) -> Bool {
        var s = url
        return s.withUTF8 { b in
            let prefix: Int
            if b.starts(with: [0x68, 0x74, 0x74, 0x70, 0x3A, 0x2F, 0x2F]) { prefix = 7 }                 // http://
            else if b.starts(with: [0x68, 0x74, 0x74, 0x70, 0x73, 0x3A, 0x2F, 0x2F]) { prefix = 8 }     // https://
            else { return false }
            var i = prefix
            var hostLength = 0
            while i < b.count && b[i] != 0x2F && b[i] != 0x3F {                     // up to / or ?
                let c = b[i]
                if c <= 0x20 || c == 0x7F || c == 0x23 || c == 0x3A && hostLength == 0 { return false }
                hostLength += 1
                i += 1
            }
            guard hostLength > 0, i < b.count, b[i] == 0x2F else { return false }  // a path must follow
            while i < b.count {
                let c = b[i]
                if c <= 0x20 || c == 0x7F || c == 0x23 { return false }
                i += 1
            }
            return true
        }
    }

    /// What `send` did with a request: answered it at once from the cache (only when the caller
    /// asked for that), or started a transfer whose completion will deliver the outcome.
    public enum Sent {
        case answered(HTTPResponse)
        case started(Transfer)
    }

    /// Prepares and starts `request`. A request that cannot be prepared fails through
    /// `completion` on a later turn, like any other failure.
    /// `configure` sets the transfer up before it starts (a file target, progress, chunks).
    @discardableResult
    public func send(_ request: consuming HTTPRequest, configure: ((Transfer) -> Void)? = nil, completion: @escaping Transfer.Completion) -> Transfer {
        switch send(request, configure: configure, answeringAtOnce: false, completion: completion) {
        case .started(let t): return t
        case .answered: fatalError("unreachable: nothing is answered at once unless asked")
        }
    }

    /// `send`, which with `answeringAtOnce` returns a fresh stored response itself instead of
    /// through `completion` on a later turn: no transfer, no turn of the loop, and `completion`
    /// is never called. The request is prepared once and looked up once either way.
    public func send(_ request: consuming HTTPRequest, configure: ((Transfer) -> Void)? = nil, answeringAtOnce: Bool,
                     completion: @escaping Transfer.Completion) -> Sent {
        var prepared = consume request   // a move: without `consume` the request was copied, then dropped
        do {
            try prepare(&prepared)
        } catch {
            return .started(loop.fail(prepared, error, completion: completion))
        }
        if let cache = configuration.cache, configure == nil {
            return sendThroughCache(prepared, cache: cache, answeringAtOnce: answeringAtOnce, completion: completion)
        }
        return .started(sendToNetwork(consume prepared, configure: configure, completion: completion))
    }

    /// Starts `prepared` on the network, within max_concurrent.
    @discardableResult
    func sendToNetwork(_ prepared: consuming HTTPRequest, configure: ((Transfer) -> Void)? = nil, completion: @escaping Transfer.Completion) -> Transfer {
        guard let limit = configuration.maxConcurrent, limit > 0 else {
            let t = Transfer(request: consume prepared, completion: completion)
            configure?(t)
            return loop.startConfigured(t, cookies: cookies)
        }
        // A long-lived stream holds no slot of the line: it would hold it for as long as it lives.
        if prepared.longLived {
            let t = Transfer(request: consume prepared, completion: completion)
            configure?(t)
            return loop.startConfigured(t, cookies: cookies)
        }
        var transfer: Transfer!
        transfer = Transfer(request: prepared) { [weak self] result in
            self?.finished(transfer)
            transfer = nil
            completion(result)
        }
        configure?(transfer)
        // Its timeout counts from now, the wait in the line included.
        transfer.armDeadline(on: loop)
        line.append(transfer)
        startWaiting(limit: limit)
        return transfer
    }

    /// A transfer ended (done, failed, or cancelled while running or waiting): free its slot.
    private func finished(_ t: Transfer) {
        running.remove(ObjectIdentifier(t))
        if let limit = configuration.maxConcurrent { startWaiting(limit: limit) }
    }

    private func startWaiting(limit: Int) {
        while running.count < limit && lineStart < line.count {
            let next = line[lineStart]
            lineStart += 1
            guard next.state == .created else { continue }   // cancelled while it waited
            running.insert(ObjectIdentifier(next))
            loop.start(next, cookies: cookies)
        }
        if lineStart > 64 && lineStart * 2 > line.count {
            line.removeFirst(lineStart)
            lineStart = 0
        }
    }
}
