/// A session's requests through its HTTP cache: answered from storage when RFC 9111 (or the
/// request's policy, or a host rule) allows, revalidated with a conditional request when stale,
/// stored when the answer may be, and collapsed when the same GET is already on the network.
extension Session {
    func sendThroughCache(_ given: HTTPRequest, cache: HTTPCache, answeringAtOnce: Bool,
                          completion: @escaping Transfer.Completion) -> Sent {
        var request = given
        // The cookies the jar will add select the entry too (libcurl adds them later, so the
        // request does not show them yet).
        if let jar = cookies { request.jarCookies = CookieMatch.header(lines: jar.all(), url: request.url, now: HTTPCache.now()) }
        let policy = request.cachePolicy ?? .default
        let requestTime = HTTPCache.now()
        cacheLookups += 1
        switch cache.lookup(request, policy: policy, now: requestTime) {
        case .hit(let stored):
            let r = stored.response(for: request)
            r.cacheStatus = stored.cacheStatus
            if answeringAtOnce { return .answered(r) }
            return .started(loop.succeed(request, r, completion: completion))

        case .offlineMiss:
            if request.offlineMissResponse {
                let r = HTTPCache.gatewayTimeout(for: request)
                r.cacheStatus = "offline"
                return .started(loop.succeed(request, r, completion: completion))
            }
            return .started(loop.fail(request, LunetError(.offline, "nothing is stored for this request, and only_if_cached keeps it off the network", url: request.url), completion: completion))

        case .miss:
            return .started(fetch(request, cache: cache, policy: policy, requestTime: requestTime, completion: completion))

        case .stale(let stored, let fields) where stored.mayServeWhileRevalidating:
            revalidateInBackground(request, stored: stored, fields: fields, cache: cache, policy: policy)
            let r = stored.response(for: request)
            r.cacheStatus = "stale"
            return .started(loop.succeed(request, r, completion: completion))

        case .stale(let stored, let fields):
            var conditional = request
            for (name, value) in fields { conditional.headers.set(name, value) }
            return .started(sendToNetwork(conditional) { [weak self] result in
                guard let self else { return completion(result) }
                let responseTime = HTTPCache.now()
                switch result {
                case .success(let r) where r.status == 304:
                    if let fresh = cache.revalidated(stored, with: r, requestTime: requestTime, responseTime: responseTime) {
                        fresh.cacheStatus = "revalidated"
                        completion(.success(fresh))
                    } else {
                        // The 304 named another representation: ask again without conditions.
                        self.fetch(request, cache: cache, policy: policy, requestTime: HTTPCache.now(), completion: completion)
                    }
                case .success(let r) where stored.mayServeInsteadOfError && CacheRules.staleIfErrorStatuses.contains(r.status):
                    let stale = stored.response(for: request)
                    stale.cacheStatus = "stale"
                    completion(.success(stale))
                case .success(let r):
                    _ = cache.store(request: r.request, response: r, requestTime: requestTime, responseTime: responseTime, policy: policy)
                    r.cacheStatus = "miss"
                    completion(.success(r))
                case .failure(let e) where (stored.mayServeStale || stored.mayServeInsteadOfError) && Self.unreachable(e):
                    let r = stored.response(for: request)
                    r.cacheStatus = "stale"
                    completion(.success(r))
                case .failure:
                    completion(result)
                }
            })
        }
    }

    /// The server could not be reached, or the exchange failed below HTTP: it closed or reset
    /// the connection, or sent nothing (RFC 9111 §4.2.4, RFC 5861 §4).
    static func unreachable(_ e: LunetError) -> Bool {
        e.connectionLost || [.connect, .dns, .timeout, .offline].contains(e.kind)
    }

    /// The network, then storage; a GET already on the network is not sent twice.
    @discardableResult
    private func fetch(_ request: HTTPRequest, cache: HTTPCache, policy: CachePolicy, requestTime: Double,
                       completion: @escaping Transfer.Completion) -> Transfer {
        let key = Self.collapsingKey(request)
        if let key, inflight[key] != nil {
            let follower = Transfer(request: request, completion: completion)
            follower.markRunning()
            inflight[key]!.append(follower)
            return follower
        }
        if let key { inflight[key] = [] }
        return sendToNetwork(request) { [weak self] result in
            if case .success(let r) = result {
                _ = cache.store(request: r.request, response: r, requestTime: requestTime, responseTime: HTTPCache.now(), policy: policy)
                r.cacheStatus = "miss"
            }
            let followers = key.flatMap { self?.inflight.removeValue(forKey: $0) } ?? []
            completion(result)
            for f in followers { f.finish(result) }
        }
    }

    /// GETs without ranges or conditions collapse; credentials are part of the key.
    static func collapsingKey(_ r: HTTPRequest) -> String? {
        guard r.method == "GET", !r.headers.contains("Range"), !r.headers.contains("If-None-Match"),
              !r.headers.contains("If-Modified-Since") else { return nil }
        return r.url + "\u{0}" + CredentialFields.material(r)
    }
}
