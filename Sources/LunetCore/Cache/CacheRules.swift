/// RFC 9111's rules for a private cache, as pure functions of header values and times.
/// Times are seconds since the Unix epoch (wall clock, the clock `Date` headers use).
/// Nothing here does I/O or keeps state; `HTTPCache` puts these rules together.
public enum CacheRules {
    /// Status codes a response may be stored with on heuristic freshness alone (RFC 9110
    /// §15.1: "heuristically cacheable"). A 206 is stored as a piece (HTTPCache+Partial.swift).
    public static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Statuses a host rule stores (other statuses fall back to the RFC rules): a rule means
    /// "this content does not change", which a 404 or a 500 does not prove.
    public static let hostRuleStatuses: Set<Int> = [200, 203, 204, 300, 301, 308]

    /// The most heuristic freshness can give (RFC 9111 §4.2.2 leaves the cap to the cache).
    public static let defaultHeuristicCap: Double = 24 * 3600

    /// Methods RFC 9110 §9.2.1 defines as safe; any other method (even an unknown one) is
    /// treated as unsafe for invalidation (RFC 9111 §4.4).
    public static func isSafe(method: String) -> Bool {
        switch method.uppercased() {
        case "GET", "HEAD", "OPTIONS", "TRACE": true
        default: false
        }
    }

    /// Final status codes whose caching requirements this cache knows and meets. 304 (it is not
    /// a response to store) is not among them.
    public static func understands(status: Int) -> Bool {
        guard status >= 200, status <= 599, status != 304 else { return false }
        return !HTTPResponse.standardReason(status).isEmpty
    }

    // MARK: storing (§3)

    public enum Storability: Equatable, Sendable {
        case storable
        case notStorable(String)
    }

    /// Whether a response may be stored (§3), for a private cache.
    /// `Authorization` does not prevent storing: §3.5 binds shared caches only. `HTTPCache`
    /// files such responses under a digest of the credential so that they serve that
    /// credential alone.
    public static func storability(method: String, requestHeaders: HTTPHeaders, status: Int, responseHeaders: HTTPHeaders) -> Storability {
        guard method.uppercased() == "GET" else { return .notStorable("only GET responses are stored (not \(method))") }
        guard status >= 200 else { return .notStorable("status \(status) is not final") }
        if status == 304 { return .notStorable("a 304 is not stored; it updates a stored response") }
        let request = requestCacheControl(requestHeaders)
        if request.noStore { return .notStorable("the request says no-store") }
        let cc = CacheControl(responseHeaders)
        let understood = understands(status: status)
        if cc.mustUnderstand && !understood { return .notStorable("must-understand, and status \(status) is not understood") }
        if cc.noStore && !(cc.mustUnderstand && understood) { return .notStorable("the response says no-store") }
        if varyNames(responseHeaders) == nil { return .notStorable("Vary: * never matches a later request") }
        if responseHeaders.all("Transfer-Encoding").contains(where: { ContentCodings.namesUnknown($0, known: ["chunked"]) }) {
            // The body may still carry it, and Transfer-Encoding is never stored (§3.1).
            return .notStorable("a transfer coding other than chunked was on the body")
        }
        let explicit = cc.maxAge != nil || responseHeaders.contains("Expires") || cc.isPublic
            || cc.isPrivate || !cc.privateFields.isEmpty
        if explicit || heuristicallyCacheable.contains(status) { return .storable }
        return .notStorable("status \(status) is cacheable only with explicit freshness (max-age, Expires, public)")
    }

    /// Fields never stored (§3.1): hop-by-hop fields and those `Connection` names, and proxy
    /// authentication fields. `Set-Cookie` is stored (nothing in RFC 9111 excepts it) and comes
    /// back with a hit's fields; a hit never reaches curl, so its cookie is not applied to the
    /// session's jar a second time.
    public static func storedHeaders(_ headers: HTTPHeaders) -> HTTPHeaders {
        let drop = Set(neverStored + connectionNominated(headers))
        var out = HTTPHeaders()
        for f in headers where !drop.contains(f.name.lowercased()) { out.add(f.name, f.value) }
        return out
    }

    static let neverStored = ["connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade",
                              "proxy-authenticate", "proxy-authentication-info", "proxy-authorization"]

    static func connectionNominated(_ headers: HTTPHeaders) -> [String] {
        headers.all("Connection").flatMap { CacheControl.fieldNames($0) }
    }

    /// Request directives, with `Pragma: no-cache` read as `Cache-Control: no-cache` when the
    /// request has no `Cache-Control` (RFC 7234 §5.4; RFC 9111 deprecates Pragma but honouring
    /// it only ever makes the cache more careful).
    public static func requestCacheControl(_ headers: HTTPHeaders) -> CacheControl {
        // Most requests carry neither field: skip the parser and its allocations.
        guard headers.contains("Cache-Control") || headers.contains("Pragma") else { return CacheControl() }
        var cc = CacheControl(headers)
        if !headers.contains("Cache-Control"),
           headers.all("Pragma").contains(where: { CacheControl.fieldNames($0).contains("no-cache") }) {
            cc.noCache = true
        }
        return cc
    }

    // MARK: freshness (§4.2)

    /// The `Date` value, or the response time when it is missing or invalid (§4.2.3 allows it).
    public static func dateValue(_ headers: HTTPHeaders, responseTime: Double) -> Double {
        headers["Date"].flatMap { HTTPDate.parse($0, now: responseTime) } ?? responseTime
    }

    /// Freshness lifetime (§4.2.1): `max-age`; else `Expires` − `Date` (an invalid `Expires`,
    /// such as "0", is in the past); else, for a heuristically cacheable status or a `public`
    /// response with `Last-Modified`, 10% of `Date` − `Last-Modified` (§4.2.2), at most `cap`;
    /// else 0. `s-maxage` is for shared caches and ignored.
    public static func freshnessLifetime(status: Int, headers: HTTPHeaders, responseTime: Double,
                                         heuristicCap: Double = defaultHeuristicCap) -> (lifetime: Double, heuristic: Bool) {
        CacheEntryFacts(status: status, headers: headers, responseTime: responseTime).freshnessLifetime(heuristicCap: heuristicCap)
    }

    /// age_value (§4.2.3) from `Age` (§5.1): the first non-empty member of its field lines taken
    /// as one list; 0 when absent. An invalid value (a suffix, a parameter, a sign, a fraction,
    /// nothing at all) is ignored, as §5.1 says a cache should and browsers do: the field counts
    /// as absent. That never makes an old response look fresh: the apparent age from `Date`
    /// (response_time − date_value) still counts in current_age, and a response with neither
    /// has only its time in the cache. A value past 2^31 saturates there (§1.2.2).
    public static func ageValue(_ headers: HTTPHeaders) -> Double {
        for line in headers.all("Age") {
            for member in line.split(separator: ",", omittingEmptySubsequences: false) {
                let m = CacheText.trimmed(String(member))
                if m.isEmpty { continue }
                return Double(CacheControl.deltaSeconds(m) ?? 0)
            }
        }
        return 0
    }

    /// current_age (§4.2.3):
    ///   apparent_age = max(0, response_time - date_value)
    ///   corrected_age_value = age_value + (response_time - request_time)
    ///   corrected_initial_age = max(apparent_age, corrected_age_value)
    ///   current_age = corrected_initial_age + (now - response_time)
    /// age_value is `ageValue(headers)`.
    public static func currentAge(headers: HTTPHeaders, requestTime: Double, responseTime: Double, now: Double) -> Double {
        CacheEntryFacts(status: 200, headers: headers, responseTime: responseTime)
            .currentAge(requestTime: requestTime, responseTime: responseTime, now: now)
    }

    /// Whether a stored response can be used without contacting the server (§4, §4.2, §5.2.1),
    /// given its response directives, the request's directives, its freshness lifetime and
    /// current age. `hostRule`: a host rule governs this response, so its own directives
    /// (no-cache, must-revalidate) do not count; the request's still do.
    public static func usableWithoutValidation(response cc: CacheControl, request q: CacheControl,
                                               lifetime: Double, age: Double, hostRule: Bool = false) -> Bool {
        if !hostRule && cc.noCache { return false }
        if q.noCache { return false }
        if let maxAge = q.maxAge, age > Double(maxAge) { return false }
        if lifetime > age {
            if let minFresh = q.minFresh, lifetime - age < Double(minFresh) { return false }
            return true
        }
        // Stale: only a max-stale request may take it, and never against must-revalidate.
        guard let maxStale = q.maxStale, hostRule || !cc.mustRevalidate else { return false }
        return maxStale == Int.max || age - lifetime <= Double(maxStale)
    }

    /// Whether a stale response may be served when the server cannot be reached (§4.2.4):
    /// not when it says must-revalidate or no-cache.
    public static func mayServeStale(_ cc: CacheControl, hostRule: Bool = false) -> Bool {
        hostRule || !(cc.mustRevalidate || cc.noCache)
    }

    /// RFC 5861 §3: "stale-while-revalidate ... indicates that caches MAY serve the response in
    /// which it appears after it becomes stale, up to the indicated number of seconds", while
    /// they revalidate it in the background. Not when the response says `no-cache` or
    /// `must-revalidate` (RFC 9111 §5.2.2.2, §5.2.2.4: validation first), nor when the request
    /// asks for validation (`no-cache`), for freshness (`min-fresh`) or for a younger response
    /// (`max-age`).
    public static func mayServeWhileRevalidating(response cc: CacheControl, request q: CacheControl,
                                                 lifetime: Double, age: Double) -> Bool {
        guard let window = cc.staleWhileRevalidate, !cc.noCache, !cc.mustRevalidate, !q.noCache, q.minFresh == nil else { return false }
        if let maxAge = q.maxAge, age > Double(maxAge) { return false }
        let staleness = age - lifetime
        return staleness > 0 && staleness <= Double(window)
    }

    /// RFC 5861 §4: "stale-if-error ... indicates that when an error is encountered, a cached
    /// stale response MAY be used to satisfy the request, regardless of other freshness
    /// information", up to the given staleness; an error being "any situation that would result
    /// in a 500, 502, 503, or 504 HTTP response status code". The request's directive, when it
    /// has one, is the client's own limit and wins over the response's. Never against
    /// `must-revalidate` or `no-cache` (RFC 9111 §4.2.4: a cache "MUST NOT generate a stale
    /// response" that such a directive forbids).
    public static func mayServeInsteadOfError(response cc: CacheControl, request q: CacheControl,
                                              lifetime: Double, age: Double) -> Bool {
        guard let window = q.staleIfError ?? cc.staleIfError, !cc.noCache, !cc.mustRevalidate else { return false }
        return age - lifetime <= Double(window)
    }

    /// Statuses RFC 5861 §4 counts as errors that `stale-if-error` may answer instead.
    public static let staleIfErrorStatuses: Set<Int> = [500, 502, 503, 504]

    // MARK: validation (§4.3)

    /// The conditional request fields that validate a stored response (§4.3.1): `If-None-Match`
    /// with its `ETag`, and `If-Modified-Since` with its `Last-Modified` (when that is a valid
    /// date). Empty when it has no validator: then the request is simply sent again.
    public static func conditionalHeaders(for stored: HTTPHeaders) -> [(String, String)] {
        var out: [(String, String)] = []
        if let etag = stored["ETag"].map(CacheText.trimmed), !etag.isEmpty { out.append(("If-None-Match", etag)) }
        if let lm = stored["Last-Modified"], HTTPDate.parse(lm) != nil { out.append(("If-Modified-Since", CacheText.trimmed(lm))) }
        return out
    }

    /// Whether a 304 can freshen the stored response it answered (§4.3.4): a strong `ETag` in
    /// the 304 selects only a stored response with that same strong `ETag` (strong comparison);
    /// a weak one selects a stored `ETag` equal to it by weak comparison; without `ETag`, a
    /// `Last-Modified` must name the stored one's date. A 304 with no validator at all answers
    /// the conditional request lunet made from this very stored response, so it selects it
    /// (§4.3.4's third case asks for a validator-less stored response, but it is written for a
    /// cache that must pick among several; here there is no choice to get wrong).
    public static func notModifiedSelects(stored: HTTPHeaders, notModified: HTTPHeaders) -> Bool {
        if let new = notModified["ETag"].map(CacheText.trimmed), !new.isEmpty {
            guard let old = stored["ETag"].map(CacheText.trimmed) else { return false }
            let newWeak = new.hasPrefix("W/"), oldWeak = old.hasPrefix("W/")
            if !newWeak { return !oldWeak && old == new }
            return (oldWeak ? String(old.dropFirst(2)) : old) == String(new.dropFirst(2))
        }
        if let new = notModified["Last-Modified"] {
            guard let old = stored["Last-Modified"], let a = HTTPDate.parse(new) else { return false }
            return HTTPDate.parse(old) == a
        }
        return true
    }

    /// Whether a 200 to a HEAD describes the stored GET response (§4.3.5): "if the stored
    /// response and HEAD response have matching values for any received validator fields (ETag
    /// and Last-Modified) and, if the HEAD response has a Content-Length header field, the
    /// value of Content-Length matches that of the stored response". A stored response without
    /// `Content-Length` is measured by its body, unless that body was decoded from a content
    /// coding (then its length on the wire is unknown, and the answer is no).
    public static func headDescribesStored(stored: HTTPHeaders, storedBodyCount: Int, head: HTTPHeaders) -> Bool {
        if let etag = head["ETag"].map(CacheText.trimmed), !etag.isEmpty {
            guard stored["ETag"].map(CacheText.trimmed) == etag else { return false }
        }
        if let lm = head["Last-Modified"] {
            guard let old = stored["Last-Modified"], let a = HTTPDate.parse(lm), HTTPDate.parse(old) == a else { return false }
        }
        if let length = head["Content-Length"].map(CacheText.trimmed) {
            if let storedLength = stored["Content-Length"].map(CacheText.trimmed) { return storedLength == length }
            let coded = stored.all("Content-Encoding").contains { !CacheText.trimmed($0).isEmpty }
            return !coded && length == String(storedBodyCount)
        }
        return true
    }

    /// The stored fields updated from a 304 or a HEAD response (§3.2, §4.3.4, §4.3.5): each
    /// field of the new response replaces the stored ones of that name, except the fields
    /// never stored (§3.1), `Content-Length` (§3.2 excepts it by name), and the fields the
    /// stored body depends on: `Content-Encoding` (the body may be stored decoded; §3.2 lets a
    /// cache keep such fields "to assure integrity of the stored response") and
    /// `Content-Range` (§3.2: "automatically processed ... implementations MAY simply ignore
    /// such header fields when updating"). Those keep their stored values.
    public static func updatedHeaders(stored: HTTPHeaders, with new: HTTPHeaders) -> HTTPHeaders {
        let keep: Set<String> = ["content-length", "content-encoding", "content-range"]
        let drop = Set(neverStored + connectionNominated(new)).union(keep)
        var replacement = HTTPHeaders()
        for f in new where !drop.contains(f.name.lowercased()) { replacement.add(f.name, f.value) }
        return stored.merging(replacement)
    }

    /// Whether a response to a POST may answer later GETs of its target (RFC 9111 §4, RFC 9110
    /// §9.3.3: "Responses to POST requests are only cacheable when they include explicit
    /// freshness information ... and a Content-Location header field that has the same value as
    /// the POST's target URI"; §8.7: the content is then "a current representation of that
    /// resource"). Explicit freshness is `max-age` or `Expires`; the status must be one a GET
    /// could be answered with as the resource's representation (200, 203); `Content-Location`
    /// is resolved against the target and both are compared normalised (`CacheKey`).
    public static func postResponseRepresentsTarget(requestURL: String, status: Int, headers: HTTPHeaders) -> Bool {
        guard status == 200 || status == 203,
              CacheControl(headers).maxAge != nil || headers.contains("Expires"),
              let location = headers["Content-Location"].map(CacheText.trimmed), !location.isEmpty,
              let target = CacheKey(url: requestURL),
              let named = CacheKey(url: URLReference(parsing: requestURL).resolving(location).string) else { return false }
        return named.string == target.string
    }

    // MARK: Vary (§4.1)

    /// The lower-cased names `Vary` nominates, sorted and without repeats; nil for `Vary: *`.
    public static func varyNames(_ headers: HTTPHeaders) -> [String]? {
        var names = Set<String>()
        for line in headers.all("Vary") {
            for name in CacheControl.fieldNames(line) {
                if name == "*" { return nil }
                names.insert(name)
            }
        }
        return names.sorted()
    }

    /// Fields whose values are secrets: stored as a digest, never in clear.
    static let secretFields: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The value a request presents for `name`, normalised so that equivalent values compare
    /// equal (§4.1): the field lines combined into one list, whitespace around commas removed,
    /// runs of spaces and tabs made one space. nil when the request lacks the field (which
    /// matches only a stored request that lacked it too). Secret fields give a digest.
    public static func varyValue(_ name: String, in headers: HTTPHeaders) -> String? {
        let lines = headers.all(name)
        guard !lines.isEmpty else { return nil }
        let joined = lines.map { CacheText.trimmed($0) }.joined(separator: ",")
        var out: [UInt8] = []
        var pendingSpace = false
        var quoted = false
        for c in joined.utf8 {
            if !quoted && (c == 0x20 || c == 0x09) { pendingSpace = true; continue }
            if !quoted && c == 0x2C {
                out.append(c)
                pendingSpace = false
                continue
            }
            if pendingSpace && !(out.last == 0x2C) && !out.isEmpty { out.append(0x20) }
            pendingSpace = false
            if c == 0x22 { quoted.toggle() }
            out.append(c)
        }
        let value = String(decoding: out, as: UTF8.self)
        return secretFields.contains(name.lowercased()) ? "sha256:" + CacheSHA256.hex(value) : value
    }

    // MARK: invalidation (§4.4)

    /// The URLs (normalised) whose stored responses a response to an unsafe method invalidates:
    /// for a non-error status (2xx, 3xx), the target URI and, when on the same origin, the
    /// `Location` and `Content-Location` URIs (resolved against the target). Empty for a safe
    /// method or an error status.
    public static func invalidatedURLs(method: String, requestURL: String, status: Int, responseHeaders: HTTPHeaders) -> [String] {
        guard !isSafe(method: method), (200..<400).contains(status), let target = CacheKey(url: requestURL) else { return [] }
        var urls = [target.url]
        let base = URLReference(parsing: requestURL)
        for name in ["Location", "Content-Location"] {
            guard let value = responseHeaders[name].map(CacheText.trimmed), !value.isEmpty else { continue }
            if let key = CacheKey(url: base.resolving(value).string), key.origin == target.origin, !urls.contains(key.url) {
                urls.append(key.url)
            }
        }
        return urls
    }
}
