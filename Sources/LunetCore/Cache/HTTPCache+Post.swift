/// A POST response that is its target's representation, kept to answer later GETs (RFC 9111 §4
/// "a cache MAY ... use a response to a POST", RFC 9110 §9.3.3). Its invalidation of the target
/// (§4.4) has already happened; the new response then takes the old one's place.
extension HTTPCache {
    /// `.stored` when `response` was stored under its target's GET key; nil when it may not
    /// be (the caller reports the invalidation instead).
    func storeAsGet(post request: HTTPRequest, response: HTTPResponse, requestTime: Double, responseTime: Double,
                    policy: CachePolicy) -> CacheStoreResult? {
        guard policy != .noStore, response.redirects == 0,
              !CacheRules.requestCacheControl(request.headers).noStore,
              CacheRules.postResponseRepresentsTarget(requestURL: request.url, status: response.status, headers: response.headers),
              CacheRules.storability(method: "GET", requestHeaders: request.headers, status: response.status,
                                     responseHeaders: response.headers) == .storable,
              let key = CacheKey(url: request.url) else { return nil }
        return keep(response, for: request, under: key, requestTime: requestTime, responseTime: responseTime)
    }
}
