/// stale-while-revalidate (RFC 5861 §3): a stale response inside its window is served at once,
/// and the session asks the server about it on the loop meanwhile, so that a later request
/// finds the fresh one. At most one such request per URL and credentials is on the network.
extension Session {
    /// Sends a conditional GET for `stored` and hands its answer to the cache: a 304 freshens
    /// the stored response; another response replaces it (or, when it may not be stored, is
    /// dropped). A failure leaves the stale response as it is; nobody waits for this.
    func revalidateInBackground(_ request: HTTPRequest, stored: CachedResponse, fields: [(String, String)],
                                cache: HTTPCache, policy: CachePolicy) {
        var get = request
        get.method = "GET"      // a HEAD's stored response is a GET's: revalidate that
        guard let key = Self.collapsingKey(get), !revalidating.contains(key), inflight[key] == nil else { return }
        revalidating.insert(key)
        var conditional = get
        for (name, value) in fields { conditional.headers.set(name, value) }
        let requestTime = HTTPCache.now()
        sendToNetwork(conditional) { [weak self] result in
            self?.revalidating.remove(key)
            guard case .success(let r) = result else { return }
            let responseTime = HTTPCache.now()
            if r.status == 304 {
                if cache.revalidated(stored, with: r, requestTime: requestTime, responseTime: responseTime) == nil {
                    // The 304 named another representation: fetch it whole, still in the background.
                    self?.sendToNetwork(get) { result in
                        if case .success(let whole) = result {
                            cache.store(request: whole.request, response: whole, requestTime: requestTime, responseTime: HTTPCache.now(), policy: policy)
                        }
                    }
                }
            } else if r.status < 500 {
                // (A server error leaves the stale response in place: RFC 5861 §4's reading.)
                cache.store(request: r.request, response: r, requestTime: requestTime, responseTime: responseTime, policy: policy)
            }
        }
    }
}
