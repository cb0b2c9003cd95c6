/// What freshness and reuse decisions need from a stored response's fields (RFC 9111 §4.2),
/// parsed once: when the entry is made, not at every lookup. A fresh hit from memory then costs
/// no parsing of `Cache-Control` or of dates at all.
///
/// `CacheRules.freshnessLifetime` and `CacheRules.currentAge` are defined through this type, so
/// the rules have one implementation, tested as pure logic.
public struct CacheEntryFacts: Sendable {
    /// The response's `Cache-Control` directives.
    public let control: CacheControl
    /// `Date`, or the response time when it is missing or invalid (§4.2.3).
    public let dateValue: Double
    /// age_value: `CacheRules.ageValue` (0 when absent, 2^31 when invalid).
    public let ageValue: Double
    /// From `max-age`, else from `Expires` − `Date` (an invalid `Expires`, or several that
    /// disagree, give 0); nil when the
    /// response has neither.
    public let explicitLifetime: Double?
    /// 10% of `Date` − `Last-Modified` (§4.2.2), before any cap, for a heuristically cacheable
    /// status or a `public` response; nil when no heuristic applies.
    public let heuristicLifetime: Double?

    public init(status: Int, headers: HTTPHeaders, responseTime: Double) {
        let cc = CacheControl(headers)
        control = cc
        let date = headers["Date"].flatMap { HTTPDate.parse($0, now: responseTime) } ?? responseTime
        dateValue = date
        ageValue = CacheRules.ageValue(headers)
        if let maxAge = cc.maxAge {
            explicitLifetime = Double(maxAge)
        } else if headers.contains("Expires") {
            // Several Expires lines that disagree make the response stale (§4.2.1), as does one
            // that is not a date (§5.3).
            let times = Set(headers.all("Expires").map { HTTPDate.parse($0, now: responseTime) })
            explicitLifetime = times.count == 1 ? times.first!.map { Swift.max(0, $0 - date) } ?? 0 : 0
        } else {
            explicitLifetime = nil
        }
        if explicitLifetime == nil, CacheRules.heuristicallyCacheable.contains(status) || cc.isPublic,
           let lm = headers["Last-Modified"].flatMap({ HTTPDate.parse($0, now: responseTime) }), lm < date {
            heuristicLifetime = (date - lm) / 10
        } else {
            heuristicLifetime = nil
        }
    }

    /// Freshness lifetime (§4.2.1); `heuristic` when it came from §4.2.2 (capped at `cap`).
    public func freshnessLifetime(heuristicCap cap: Double) -> (lifetime: Double, heuristic: Bool) {
        if let explicitLifetime { return (explicitLifetime, false) }
        if let heuristicLifetime { return (Swift.min(cap, heuristicLifetime), true) }
        return (0, false)
    }

    /// current_age (§4.2.3):
    ///   apparent_age = max(0, response_time - date_value)
    ///   corrected_age_value = age_value + (response_time - request_time)
    ///   corrected_initial_age = max(apparent_age, corrected_age_value)
    ///   current_age = corrected_initial_age + (now - response_time)
    public func currentAge(requestTime: Double, responseTime: Double, now: Double) -> Double {
        let apparent = Swift.max(0, responseTime - dateValue)
        let corrected = ageValue + Swift.max(0, responseTime - requestTime)
        return Swift.max(apparent, corrected) + Swift.max(0, now - responseTime)
    }
}
