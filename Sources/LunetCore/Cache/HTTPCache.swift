import Glibc

/// The HTTP cache: RFC 9111 for a private cache, over a memory tier (LRU, byte limit) and an
/// optional disk tier (atomic files, checked on read, shared by processes), with host rules
/// and per-request policies. See docs/cache.md.
///
/// A session calls it around each transfer:
///
///     switch cache.lookup(request, policy: policy, now: t0) {
///     case .hit(let stored):      serve stored.response(for: request)      // r.cache = stored.cacheStatus
///     case .offlineMiss:          fail with LunetError(.offline, …)
///     case .miss:                 send; then cache.store(request:response:requestTime:responseTime:policy:)
///     case .stale(let stored, let fields):
///         if stored.mayServeWhileRevalidating: serve stored.response(for: request) ("stale") now,
///         and do what follows in the background (stale-while-revalidate). Else:
///         send with `fields` added; on a 304: cache.revalidated(stored, with: r, …) ("revalidated");
///         on a 5xx and stored.mayServeInsteadOfError: serve the stored one ("stale");
///         on another response: cache.store(…) ("miss"); if the server cannot be reached and
///         stored.mayServeStale: serve stored.response(for: request) ("stale")
///     }
///
/// The parts beside this file: HTTPCache+Head (a HEAD's 200 about a stored GET), +Post (a POST
/// response that is its target's representation), +Partial (206 pieces and Range requests).
///
/// Every method is thread-safe. The memory tier, rules and counters sit behind one mutex that is
/// never held during disk I/O; the disk tier has its own (and `flock` between processes).
public final class HTTPCache: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// Bytes the memory tier may hold (0: no memory tier to speak of).
        public var memoryLimit: Int
        /// Bytes the disk tier may hold.
        public var diskLimit: Int
        /// The disk tier's directory, created when first needed; nil for memory only.
        /// `HTTPCache.defaultDirectory()` gives the usual one.
        public var directory: String?
        /// The most heuristic freshness (§4.2.2) may give, in seconds.
        public var heuristicCap: Double
        /// fsync each disk entry before renaming it into place, so that a stored entry survives a
        /// power cut. Without it a crash can lose recent entries (they then fail their checksums
        /// and are dropped), never serve a torn one; each store is then much cheaper (~0.2 ms
        /// instead of ~5 ms on a typical disk).
        public var syncWrites: Bool

        public init(memoryLimit: Int = 32 << 20, diskLimit: Int = 512 << 20, directory: String? = nil,
                    heuristicCap: Double = CacheRules.defaultHeuristicCap, syncWrites: Bool = true) {
            self.memoryLimit = memoryLimit
            self.diskLimit = diskLimit
            self.directory = directory
            self.heuristicCap = heuristicCap
            self.syncWrites = syncWrites
        }
    }

    public let configuration: Configuration
    let memory: CacheMemoryTier
    let disk: CacheDiskTier?
    /// Where the disk tier's writes and removals go: a thread of their own (CacheDiskWriter).
    let diskWriter: CacheDiskWriter?
    var hostRules: [CacheHostRule] = []
    var counters = CacheStats()
    private var keyMemo: [String: CacheKey?] = [:]
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Cheap: no file is touched until the first lookup or store.
    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
        memory = CacheMemoryTier(limit: configuration.memoryLimit)
        disk = configuration.directory.map {
            CacheDiskTier(directory: Self.expandingTilde($0), limit: configuration.diskLimit, syncWrites: configuration.syncWrites)
        }
        diskWriter = disk.map { CacheDiskWriter(disk: $0) }
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        if diskWriter != nil {
            pthread_mutex_lock(&Self.registryLock)
            Self.withDisk[ObjectIdentifier(self)] = WeakCache(cache: self)
            pthread_mutex_unlock(&Self.registryLock)
        }
    }

    /// Waits until every store and removal queued for the disk tier is on disk. (The writes
    /// done when the cache is released are waited for then too.)
    public func flush() { diskWriter?.drain() }

    /// Caches with a disk tier, for `flushAll` (weak: the registry keeps none alive).
    nonisolated(unsafe) private static var withDisk: [ObjectIdentifier: WeakCache] = [:]
    nonisolated(unsafe) private static var registryLock = pthread_mutex_t()
    private struct WeakCache { weak var cache: HTTPCache? }

    /// Waits for every cache's queued disk writes: what a program does before it exits (the
    /// lunet program does in `leave()` and `os.exit`), so that a one-shot run's entry is on disk.
    public static func flushAll() {
        pthread_mutex_lock(&registryLock)
        let caches = withDisk.values.compactMap(\.cache)
        pthread_mutex_unlock(&registryLock)
        for c in caches { c.flush() }
    }

    deinit {
        if diskWriter != nil {
            pthread_mutex_lock(&Self.registryLock)
            Self.withDisk[ObjectIdentifier(self)] = nil
            pthread_mutex_unlock(&Self.registryLock)
        }
        diskWriter?.finish()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    // MARK: places and clocks

    /// `$XDG_CACHE_HOME/lunet/http` when XDG_CACHE_HOME is an absolute path, else
    /// `$HOME/.cache/lunet/http` (HOME from the environment, else the password database).
    public static func defaultDirectory() -> String? {
        if let x = getenv("XDG_CACHE_HOME").map({ String(cString: $0) }), x.hasPrefix("/") { return x + "/lunet/http" }
        guard let home = homeDirectory() else { return nil }
        return home + "/.cache/lunet/http"
    }

    /// `~` and `~/…` with the home directory; other paths unchanged.
    public static func expandingTilde(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/"), let home = homeDirectory() else { return path }
        return home + path.dropFirst()
    }

    private static func homeDirectory() -> String? {
        if let h = getenv("HOME").map({ String(cString: $0) }), !h.isEmpty { return h }
        if let pw = getpwuid(getuid()), let dir = pw.pointee.pw_dir { return String(cString: dir) }
        return nil
    }

    /// The wall clock (seconds since the epoch): what `now`, `requestTime` and `responseTime` are.
    public static func now() -> Double { HTTPDate.currentTime() }

    // MARK: host rules

    /// GETs to hosts matching `host` (`cdn.example.com`, `*.example.com`, `*`) are stored and
    /// served for `ttl` seconds whatever their headers say. A rule for the same pattern replaces
    /// the old one; the most specific matching rule applies.
    public func rule(host: String, ttl: Double) throws(LunetError) {
        guard let rule = CacheHostRule(host: host, ttl: ttl) else {
            throw LunetError(.argument, "invalid cache rule: host '\(host)' (a host, '*.domain' or '*') with ttl \(ttl) (seconds, 0 or more)")
        }
        locked {
            hostRules.removeAll { $0.pattern == rule.pattern }
            hostRules.append(rule)
        }
    }

    @discardableResult
    public func removeRule(host: String) -> Bool {
        guard let probe = CacheHostRule(host: host, ttl: 0) else { return false }
        return locked {
            let before = hostRules.count
            hostRules.removeAll { $0.pattern == probe.pattern }
            return hostRules.count != before
        }
    }

    public var rules: [CacheHostRule] { locked { hostRules } }

    private func hostRule(for host: String) -> CacheHostRule? {
        hostRules.filter { $0.matches(host) }.max { $0.specificity < $1.specificity }
    }

    // MARK: lookup

    /// Request fields that make the cache stand aside: the caller is validating itself, and the
    /// answer must be the server's. (`Range` alone is answered from storage when it can be:
    /// HTTPCache+Partial.swift.)
    static let bypassFields = ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range"]

    /// What to do with `request` (a prepared request: absolute URL, every field it will carry).
    /// `now`: the wall clock.
    public func lookup(_ request: HTTPRequest, policy: CachePolicy = .default, now: Double = HTTPCache.now()) -> CacheDecision {
        let q = CacheRules.requestCacheControl(request.headers)
        let offline = policy == .onlyIfCached || q.onlyIfCached
        func nothing() -> CacheDecision {
            count(\.misses)
            return offline ? .offlineMiss : .miss
        }
        let method = request.method == "GET" ? "GET" : request.method.uppercased()
        guard method == "GET" || method == "HEAD", policy != .reload, policy != .noStore,
              !Self.bypassFields.contains(where: { request.headers.contains($0) }),
              let key = key(for: request.url) else { return nothing() }
        let range = request.headers["Range"]
        if range != nil && method != "GET" { return nothing() }
        let (found, rule) = candidate(for: request, key: key)
        guard let entry = found else { return nothing() }
        var stored = evaluate(entry, now: now, rule: rule)
        if let range {
            // A range is served from a complete or partial response that holds it, and only
            // without validation; anything else goes to the server (RFC 9111 §3.3, §3.4).
            guard let bytes = Self.servableRange(range, from: entry, for: request) else { return nothing() }
            stored.range = bytes
            if policy == .default && !CacheRules.usableWithoutValidation(response: entry.facts.control, request: q,
                                                                         lifetime: stored.freshnessLifetime, age: stored.age,
                                                                         hostRule: rule != nil) { return nothing() }
        } else if entry.status == 206 {
            return nothing()    // §3.3: an incomplete response never answers a whole request
        }
        switch policy {
        case .preferCache, .onlyIfCached:
            count(\.hits)
            return .hit(stored)
        case .default, .reload, .noStore:
            if CacheRules.usableWithoutValidation(response: entry.facts.control, request: q, lifetime: stored.freshnessLifetime,
                                                  age: stored.age, hostRule: rule != nil) {
                count(\.hits)
                return .hit(stored)
            }
            if q.onlyIfCached { return nothing() }
            count(\.validations)
            var stale = stored
            if rule == nil {
                let cc = entry.facts.control
                stale.mayServeWhileRevalidating = CacheRules.mayServeWhileRevalidating(response: cc, request: q,
                                                                                      lifetime: stored.freshnessLifetime, age: stored.age)
                stale.mayServeInsteadOfError = CacheRules.mayServeInsteadOfError(response: cc, request: q,
                                                                                lifetime: stored.freshnessLifetime, age: stored.age)
            }
            return .stale(stale, revalidate: CacheRules.conditionalHeaders(for: entry.headers))
        }
    }

    /// The stored response that would answer `request` (memory first, then disk), and the host
    /// rule of its host.
    func candidate(for request: HTTPRequest, key: CacheKey) -> (entry: CacheEntry?, rule: CacheHostRule?) {
        let credential = Self.credential(request, key)
        let encoded = Self.wantsEncodedBody(request)
        // The rule and the memory entry under one lock (the disk is read without it).
        pthread_mutex_lock(mutex)
        let rule = hostRules.isEmpty ? nil : hostRule(for: key.host)
        let fromMemory = newestAccepted(memory.variants(key.string), credential: credential, encoded: encoded,
                                        ruled: rule != nil, request.headers)
        pthread_mutex_unlock(mutex)
        return (fromMemory ?? fromDisk(key.string, credential: credential, encoded: encoded, ruled: rule != nil, request.headers), rule)
    }

    /// `CacheKey(url:)`, remembered: a program asks for the same few URLs again and again, and
    /// normalising one costs more than the rest of a memory hit.
    private func key(for url: String) -> CacheKey? {
        if let known = locked({ keyMemo[url] }) { return known }
        let key = CacheKey(url: url)
        locked {
            if keyMemo.count >= Self.keyMemoLimit { keyMemo.removeAll(keepingCapacity: true) }
            keyMemo[url] = key
        }
        return key
    }

    /// URLs whose keys are remembered; past it the memo starts again (a crude bound, but a
    /// program that requests more distinct URLs than this gains little from it anyway).
    static let keyMemoLimit = 1024

    func count(_ counter: WritableKeyPath<CacheStats, Int>, _ n: Int = 1) {
        locked { counters[keyPath: counter] += n }
    }

    /// The most recent of `variants` that may answer the request: same credential, same body
    /// coding, and (without a host rule) matching `Vary` fields.
    private func newestAccepted(_ variants: [CacheEntry], credential: String, encoded: Bool, ruled: Bool,
                                _ headers: HTTPHeaders) -> CacheEntry? {
        var best: CacheEntry?
        for e in variants where Self.accepts(e, credential: credential, encoded: encoded, ruled: ruled, headers) {
            if best == nil || best!.recency < e.recency { best = e }
        }
        return best
    }

    private static func accepts(_ e: CacheEntry, credential: String, encoded: Bool, ruled: Bool, _ headers: HTTPHeaders) -> Bool {
        e.credential == credential && hasEncodedBody(e) == encoded && (ruled || varyMatches(e.vary, headers))
    }

    /// The disk's accepted variant, read without holding the cache's lock, then kept in memory.
    private func fromDisk(_ key: String, credential: String, encoded: Bool, ruled: Bool, _ headers: HTTPHeaders) -> CacheEntry? {
        // What was queued for this key lands first: the read never sees the tier before it.
        diskWriter?.settle(key: key)
        guard let disk, let e = disk.load(key: key, accept: {
            Self.accepts($0, credential: credential, encoded: encoded, ruled: ruled, headers)
        }) else { return nil }
        locked { _ = memory.put(e) }
        return e
    }

    func evaluate(_ entry: CacheEntry, now: Double, rule: CacheHostRule?) -> CachedResponse {
        if let rule {
            return CachedResponse(entry: entry, now: now, age: Swift.max(0, now - entry.responseTime), freshnessLifetime: rule.ttl,
                                  heuristic: false, hostRule: rule, mayServeStale: true)
        }
        let (lifetime, heuristic) = entry.facts.freshnessLifetime(heuristicCap: configuration.heuristicCap)
        let age = entry.facts.currentAge(requestTime: entry.requestTime, responseTime: entry.responseTime, now: now)
        return CachedResponse(entry: entry, now: now, age: age, freshnessLifetime: lifetime, heuristic: heuristic, hostRule: nil,
                              mayServeStale: CacheRules.mayServeStale(entry.facts.control))
    }

    static func varyMatches(_ fields: [CacheVaryField], _ headers: HTTPHeaders) -> Bool {
        fields.allSatisfy { $0.name.hasPrefix(":") || $0.name != "*" && CacheRules.varyValue($0.name, in: headers) == $0.value }
    }

    /// A pseudo-field (names starting with ":" are never real fields) marking a body stored as
    /// it came off the wire: with `decompress = false` the body is still content-coded, and such
    /// a response must never answer a request that expects a decoded body, nor the reverse.
    static let encodedBodyField = ":encoded-body"

    static func wantsEncodedBody(_ request: HTTPRequest) -> Bool { request.options.decompress == false }

    static func hasEncodedBody(_ e: CacheEntry) -> Bool { e.vary.contains { $0.name == encodedBodyField } }

    /// "" without credentials; else a digest of everything that says who is asking: the URL's
    /// user information, every credential field (Authorization, Cookie, API keys: see
    /// CredentialFields.material) and the cookies the session's jar adds, the credentials
    /// libcurl sends itself (Digest, NTLM, SigV4, .netrc). A response stored with credentials
    /// serves only the same credentials (RFC 9111 §3.5, and a private cache's promise that one
    /// user's answer never serves another).
    static func credential(_ request: HTTPRequest, _ key: CacheKey) -> String {
        var o = request.options
        if o.netrcFile == "" { o.netrcFile = nil }   // turned off
        let fields = CredentialFields.material(request)
        guard key.userinfo != nil || !fields.isEmpty || o.curlAuth != nil || o.netrcFile != nil else { return "" }
        var text = "userinfo:" + (key.userinfo ?? "") + "\nfields:" + fields
        if let d = o.curlAuth { text += "\n\(d.scheme):" + d.user + ":" + d.password }
        if let netrc = o.netrcFile { text += "\nnetrc:" + netrc }
        return CacheSHA256.hex(text, bytes: 16)
    }

    // MARK: after the network

    /// Hand every response that came from the network here (except a 304 answering a `.stale`
    /// decision: that goes to `revalidated`). An unsafe method's response invalidates what it
    /// changed (§4.4); a storable GET response is stored (replacing its variant); a 200 to a
    /// HEAD freshens or invalidates the stored GET response (§4.3.5); a POST response that says
    /// it is the target's representation is stored for later GETs (RFC 9110 §9.3.3); anything
    /// else is left alone. `request` is the request as sent (its fields select variants);
    /// `requestTime` is when it was sent, `responseTime` when the response arrived (wall clock).
    /// The memory tier has the entry when this returns; the disk write (fsync included) is
    /// queued for the disk writer's thread (CacheDiskWriter): the caller never waits for it.
    @discardableResult
    public func store(request: HTTPRequest, response: HTTPResponse, requestTime: Double, responseTime: Double,
                      policy: CachePolicy = .default) -> CacheStoreResult {
        let method = request.method.uppercased()
        if !CacheRules.isSafe(method: method) {
            let removed = invalidate(request: request, response: response)
            if method == "POST", let kept = storeAsGet(post: request, response: response, requestTime: requestTime,
                                                      responseTime: responseTime, policy: policy) { return kept }
            return .invalidated(removed)
        }
        if method == "HEAD" { return update(request: request, fromHead: response, requestTime: requestTime, responseTime: responseTime) }
        guard method == "GET" else { return .notStored("only GET responses are stored (not \(method))") }
        guard policy != .noStore else { return .notStored("the policy is no_store") }
        if CacheRules.requestCacheControl(request.headers).noStore { return .notStored("the request says no-store") }
        guard let key = CacheKey(url: response.redirects > 0 ? response.url : request.url) else {
            return .notStored("not an http(s) URL with a host")
        }
        let ruled = locked { hostRule(for: key.host) } != nil && CacheRules.hostRuleStatuses.contains(response.status)
        if !ruled {
            if case .notStorable(let why) = CacheRules.storability(method: method, requestHeaders: request.headers,
                                                                   status: response.status, responseHeaders: response.headers) {
                return .notStored(why)
            }
        }
        if response.status == 206 {
            return storePartial(response, for: request, under: key, requestTime: requestTime, responseTime: responseTime)
        }
        return keep(response, for: request, under: key, requestTime: requestTime, responseTime: responseTime)
    }

    /// Stores `response` under `key` (a storable response: the caller has checked), replacing
    /// the variant it matches.
    func keep(_ response: HTTPResponse, for request: HTTPRequest, under key: CacheKey, requestTime: Double,
              responseTime: Double) -> CacheStoreResult {
        var vary = (CacheRules.varyNames(response.headers) ?? ["*"]).map {
            CacheVaryField(name: $0, value: $0 == "*" ? nil : CacheRules.varyValue($0, in: request.headers))
        }
        if Self.wantsEncodedBody(request) { vary.append(CacheVaryField(name: Self.encodedBodyField, value: "1")) }
        let entry = CacheEntry(key: key.string, url: response.url, status: response.status, reason: response.reason,
                               httpVersion: response.httpVersion, headers: CacheRules.storedHeaders(response.headers),
                               body: response.body, vary: vary, credential: Self.credential(request, key),
                               requestTime: requestTime, responseTime: responseTime)
        locked {
            memory.put(entry)
            counters.stores += 1
        }
        diskWriter?.enqueue(.write(entry))
        return .stored
    }

    /// A 304 answering the conditional request of `.stale(stored, …)`: freshens the stored
    /// response (its fields updated from the 304, §3.2 and §4.3.4; its times the new ones) and
    /// returns the response to hand the caller (`r.cache` = "revalidated"), with the stored body
    /// and `Age`. nil when the 304 is not about `stored` (another validator, or not a 304): then
    /// send the request again without conditional fields.
    public func revalidated(_ stored: CachedResponse, with notModified: HTTPResponse,
                            requestTime: Double, responseTime: Double) -> HTTPResponse? {
        guard notModified.status == 304,
              CacheRules.notModifiedSelects(stored: stored.entry.headers, notModified: notModified.headers) else { return nil }
        let headers = CacheRules.updatedHeaders(stored: stored.entry.headers, with: notModified.headers)
        let updated = stored.entry.updated(headers: headers, requestTime: requestTime, responseTime: responseTime)
        let ruled = stored.hostRule != nil
        let keep = ruled || !CacheControl(headers).noStore
        locked {
            if keep { memory.put(updated) } else { memory.remove(key: updated.key, variant: updated.variant) }
            counters.revalidations += 1
        }
        if let disk, let diskWriter {
            diskWriter.enqueue(keep ? .write(updated) : .removePath(disk.path(for: updated), key: updated.key))
        }
        let age = ruled ? 0 : CacheRules.currentAge(headers: headers, requestTime: requestTime, responseTime: responseTime, now: responseTime)
        var served = headers
        served.set("Age", CachedResponse.ageString(age))
        return Self.makeResponse(updated, headers: served, request: notModified.request, timings: notModified.timings,
                                 connectionsOpened: notModified.connectionsOpened)
    }

    /// Invalidation (§4.4) alone: an unsafe method's non-error response removes the stored
    /// responses of its target URI and of same-origin `Location` / `Content-Location`.
    /// `store` already does this; returns how many stored responses went.
    @discardableResult
    public func invalidate(request: HTTPRequest, response: HTTPResponse) -> Int {
        var n = 0
        for url in CacheRules.invalidatedURLs(method: request.method, requestURL: request.url, status: response.status,
                                              responseHeaders: response.headers) {
            if let key = CacheKey(url: url) { n += removeKey(key.string) }
        }
        count(\.invalidations, n)
        return n
    }

    /// Invalidation's removal: the memory tier's now, the disk's queued (the count is the
    /// memory tier's).
    private func removeKey(_ key: String) -> Int {
        let m = locked { memory.remove(key: key) }
        diskWriter?.enqueue(.removeKey(key))
        return m
    }

    /// What RFC 9111 §5.2.1.7 lets a cache answer to `only-if-cached` when it has nothing:
    /// "respond with a 504 (Gateway Timeout) status code". Made here, without the network;
    /// `no-store` so that it is never taken for a stored response.
    public static func gatewayTimeout(for request: HTTPRequest) -> HTTPResponse {
        let body = "nothing is stored for this request, and only_if_cached keeps it off the network\n"
        return HTTPResponse(status: 504, reason: HTTPResponse.standardReason(504),
                            headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store"),
                                                  ("Content-Length", String(body.utf8.count)), ("Date", HTTPDate.format(now()))]),
                            body: ByteBuffer(request.method == "HEAD" ? "" : body), url: request.url, httpVersion: "", timings: HTTPResponse.Timings(), request: request,
                            connectionsOpened: 0, redirects: 0)
    }

    static func makeResponse(_ entry: CacheEntry, headers: HTTPHeaders, request: HTTPRequest, timings: HTTPResponse.Timings,
                             connectionsOpened: Int) -> HTTPResponse {
        HTTPResponse(status: entry.status, reason: entry.reason, headers: headers,
                     body: request.method.uppercased() == "HEAD" ? ByteBuffer() : entry.body,
                     url: entry.url, httpVersion: entry.httpVersion, timings: timings, request: request,
                     connectionsOpened: connectionsOpened, redirects: 0)
    }
}
