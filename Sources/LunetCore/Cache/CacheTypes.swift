/// How one request uses the cache. The raw values are the strings Lua passes (`cache = "…"`).
public enum CachePolicy: String, Sendable, CaseIterable {
    /// RFC 9111: serve fresh responses, validate stale ones, store what may be stored.
    case `default` = "default"
    /// Never use a stored response, but store the new one.
    case reload = "reload"
    /// Neither use nor store (responses to unsafe methods still invalidate).
    case noStore = "no_store"
    /// Use a stored response however old (even one marked no-cache or must-revalidate); else the network.
    case preferCache = "prefer_cache"
    /// Never the network: a stored response however old, else `.offlineMiss`.
    case onlyIfCached = "only_if_cached"
}

/// One field a stored response varies on (RFC 9111 §4.1): its lower-cased name and the value
/// the stored request presented, normalised (`CacheRules.varyValue`); nil when it had none.
public struct CacheVaryField: Equatable, Sendable {
    public var name: String
    public var value: String?
    public init(name: String, value: String?) { self.name = name; self.value = value }
}

/// A stored response with what it was stored under.
public struct CacheEntry {
    /// `CacheKey.string`: method and normalised URL.
    public let key: String
    /// The response's own URL, as it is served again (`HTTPResponse.url`).
    public let url: String
    public let status: Int
    public let reason: String
    public let httpVersion: String
    /// The response's fields as stored (`CacheRules.storedHeaders`).
    public let headers: HTTPHeaders
    /// Shared with the responses served from it: nobody may change a response body after the fact.
    public let body: ByteBuffer
    public let vary: [CacheVaryField]
    /// "" for a request without credentials; else a digest of its `Authorization` value and URL
    /// user information. A response stored with credentials serves only the same credentials.
    public let credential: String
    public let requestTime: Double
    public let responseTime: Double
    /// Names the variant within its key (16 hex digits): a digest of key, vary values, credential.
    public let variant: String
    /// Its fields as freshness decisions read them, parsed once here.
    public let facts: CacheEntryFacts

    init(key: String, url: String, status: Int, reason: String, httpVersion: String, headers: HTTPHeaders,
         body: ByteBuffer, vary: [CacheVaryField], credential: String, requestTime: Double, responseTime: Double) {
        self.key = key
        self.url = url
        self.status = status
        self.reason = reason
        self.httpVersion = httpVersion
        self.headers = headers
        self.body = body
        self.vary = vary
        self.credential = credential
        self.requestTime = requestTime
        self.responseTime = responseTime
        var d = key + "\n" + credential
        for f in vary { d += "\n" + f.name + (f.value.map { "=" + $0 } ?? "") }
        self.variant = CacheSHA256.hex(d, bytes: 8)
        self.facts = CacheEntryFacts(status: status, headers: headers, responseTime: responseTime)
    }

    /// The same entry with other fields and times (after a 304).
    func updated(headers: HTTPHeaders, requestTime: Double, responseTime: Double) -> CacheEntry {
        CacheEntry(key: key, url: url, status: status, reason: reason, httpVersion: httpVersion, headers: headers,
                   body: body, vary: vary, credential: credential, requestTime: requestTime, responseTime: responseTime)
    }

    /// The bytes an entry is charged in the memory tier: body, fields, strings, and a fixed
    /// overhead for the bookkeeping.
    var cost: Int {
        var n = 256 + body.count + key.utf8.count + url.utf8.count + reason.utf8.count + credential.utf8.count
        for f in headers { n += f.name.utf8.count + f.value.utf8.count + 32 }
        for v in vary { n += v.name.utf8.count + (v.value?.utf8.count ?? 0) + 32 }
        return n
    }

    /// For choosing among several matching variants: the newest by `Date`, then by arrival.
    var recency: (Double, Double) { (facts.dateValue, responseTime) }
}

/// A stored response as it stands at lookup time.
public struct CachedResponse {
    public let entry: CacheEntry
    /// The time of the lookup.
    public let now: Double
    /// current_age (RFC 9111 §4.2.3) at `now`; the `Age` a response served from it carries.
    public let age: Double
    public let freshnessLifetime: Double
    /// The lifetime came from the heuristic (§4.2.2), not from the server.
    public let heuristic: Bool
    /// The host rule that governs this response, if any.
    public let hostRule: CacheHostRule?
    /// May be served, marked stale, when the server cannot be reached (§4.2.4).
    public let mayServeStale: Bool
    /// Set on `.stale` decisions: inside its `stale-while-revalidate` window (RFC 5861 §3), so
    /// it may be served at once while it is revalidated in the background.
    public internal(set) var mayServeWhileRevalidating = false
    /// Set on `.stale` decisions: inside a `stale-if-error` window (RFC 5861 §4, the request's
    /// or the response's), so it may answer in place of a 500, 502, 503 or 504.
    public internal(set) var mayServeInsteadOfError = false
    /// Set when the request asks for a range that this entry holds: those bytes of the
    /// representation, and its whole length when known (for `Content-Range`).
    public internal(set) var range: (bytes: ClosedRange<Int>, length: Int?)?

    public var isFresh: Bool { freshnessLifetime > age }
    /// What `r.cache` says when this is served without the network: "hit" or "stale".
    public var cacheStatus: String { isFresh ? "hit" : "stale" }

    /// A response for `request` served from this entry, without the network: the stored fields
    /// with `Age` set, minus fields a qualified `no-cache="…"` keeps from unvalidated reuse; the
    /// stored body (none for HEAD); timings all zero.
    public func response(for request: HTTPRequest) -> HTTPResponse {
        var headers = entry.headers
        if hostRule == nil {
            for name in entry.facts.control.noCacheFields { headers.remove(name) }
        }
        headers.set("Age", CachedResponse.ageString(age))
        if let range { return HTTPCache.partialResponse(entry, range: range, headers: headers, request: request) }
        return HTTPCache.makeResponse(entry, headers: headers, request: request, timings: HTTPResponse.Timings(),
                                      connectionsOpened: 0)
    }

    static func ageString(_ age: Double) -> String {
        guard age.isFinite, age > 0 else { return "0" }
        return String(Int(Swift.min(age, Double(CacheControl.greatestDelta)).rounded(.down)))
    }
}

/// What to do with a request, from `HTTPCache.lookup`.
public enum CacheDecision {
    /// Serve this without the network (`r.cache` = `stored.cacheStatus`: "hit", or "stale" when
    /// a policy or `max-stale` allowed a stale one).
    case hit(CachedResponse)
    /// Send the request with these fields added (none when the stored response has no
    /// validator). A 304 goes to `HTTPCache.revalidated`; anything else to `HTTPCache.store`.
    /// If the server cannot be reached and `stored.mayServeStale`, the stored response may be
    /// served instead, marked "stale".
    case stale(CachedResponse, revalidate: [(String, String)])
    /// Nothing usable: send the request, then hand the response to `HTTPCache.store`.
    case miss
    /// `only_if_cached` (policy or request directive) and nothing usable: fail the request with
    /// kind `offline`, without the network.
    case offlineMiss
}

/// What `HTTPCache.store` did.
public enum CacheStoreResult: Equatable, Sendable {
    case stored
    /// Not stored, and why (for verbose output and tests).
    case notStored(String)
    /// An unsafe method's response removed this many stored responses (or a HEAD response
    /// whose validators differ removed the stored GET response).
    case invalidated(Int)
    /// A HEAD response updated the stored GET response's fields and times (RFC 9111 §4.3.5).
    case freshened
}

public struct CacheStats: Equatable, Sendable {
    /// Lookups answered from the cache, fresh or (by policy) stale.
    public var hits = 0
    /// Lookups with nothing usable (`.miss` and `.offlineMiss`).
    public var misses = 0
    /// Lookups that asked for validation (`.stale`).
    public var validations = 0
    /// 304s that freshened a stored response.
    public var revalidations = 0
    /// Responses stored.
    public var stores = 0
    /// Stored responses removed by unsafe methods.
    public var invalidations = 0
    public var memoryEntries = 0
    public var memoryBytes = 0
    public var memoryLimit = 0
    public var diskEntries = 0
    public var diskBytes = 0
    public var diskLimit = 0
    /// nil when the cache has no disk tier.
    public var diskDirectory: String?
    /// Why the disk tier is off, when it is.
    public var diskDisabledReason: String?
    /// The last disk failure that did not turn the tier off (a full disk, say).
    public var lastDiskError: String?
    public init() {}
}

/// One stored response, for a listing.
public struct CacheListing: Equatable, Sendable {
    public var url: String
    public var status: Int
    /// Body bytes.
    public var size: Int
    public var age: Double
    public var freshnessLifetime: Double
    public var isFresh: Bool
    public var inMemory: Bool
    public var onDisk: Bool
    /// The request fields it varies on, as stored (secrets as digests).
    public var vary: [String]
}
