/// A HEAD response about a stored GET response (RFC 9111 §4.3.5): it freshens the stored
/// response when it describes the same representation, and retires it when it does not.
extension HTTPCache {
    /// "When a cache makes an inbound HEAD request for a target URI and receives a 200 (OK)
    /// response, the cache SHOULD update or invalidate each of its stored GET responses that
    /// could have been chosen for that request": the one a lookup of `request` would choose.
    /// Its fields are updated as from a 304 (§3.2) and its times become the HEAD's; when the
    /// validators or `Content-Length` differ, or the HEAD says `no-store`, it is removed
    /// ("consider the stored response to be stale": removing it is the simplest way never to
    /// serve it unvalidated).
    func update(request: HTTPRequest, fromHead head: HTTPResponse, requestTime: Double, responseTime: Double) -> CacheStoreResult {
        guard head.status == 200 else { return .notStored("a \(head.status) to a HEAD neither is stored nor updates a stored GET") }
        guard let key = CacheKey(url: head.redirects > 0 ? head.url : request.url),
              let entry = candidate(for: request, key: key).entry else {
            return .notStored("only GET responses are stored (not HEAD)")
        }
        let keep = CacheRules.headDescribesStored(stored: entry.headers, storedBodyCount: entry.body.count, head: head.headers)
            && !CacheControl(head.headers).noStore
        if keep {
            let updated = entry.updated(headers: CacheRules.updatedHeaders(stored: entry.headers, with: head.headers),
                                        requestTime: requestTime, responseTime: responseTime)
            locked { _ = memory.put(updated) }
            diskWriter?.enqueue(.write(updated))
            return .freshened
        }
        locked { _ = memory.remove(key: entry.key, variant: entry.variant) }
        count(\.invalidations)
        if let disk, let diskWriter { diskWriter.enqueue(.removePath(disk.path(for: entry), key: entry.key)) }
        return .invalidated(1)
    }
}
