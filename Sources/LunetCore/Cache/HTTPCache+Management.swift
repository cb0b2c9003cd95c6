import Glibc

/// Managing a cache: purge, clear, stats and the listing, each of both tiers (they wait for
/// the disk writer's queue first).
extension HTTPCache {
    /// Removes every stored response for `url` (all variants, every credential); returns how many.
    @discardableResult
    public func purge(_ url: String) -> Int {
        guard let key = CacheKey(url: url) else { return 0 }
        // Management: done before it returns, so that its count covers both tiers.
        let m = locked { memory.remove(key: key.string) }
        diskWriter?.settle(key: key.string)
        let d = disk?.remove(key: key.string) ?? 0
        return Swift.max(m, d)
    }

    /// Removes every stored response from both tiers (the counters of `stats` stay).
    public func clear() {
        locked { memory.removeAll() }
        diskWriter?.drain()
        disk?.removeAll()
    }

    public func stats() -> CacheStats {
        diskWriter?.drain()   // the disk's figures include what is queued
        var s = locked { () -> CacheStats in
            var s = counters
            s.memoryEntries = memory.entryCount
            s.memoryBytes = memory.bytes
            s.memoryLimit = memory.limit
            return s
        }
        if let disk {
            let u = disk.usage()
            s.diskEntries = u.entries
            s.diskBytes = u.bytes
            s.diskLimit = disk.limit
            s.diskDirectory = disk.directory
            s.diskDisabledReason = disk.disabledReason
            s.lastDiskError = disk.lastError
        }
        return s
    }

    /// What is stored, both tiers, sorted by URL: for a REPL user. Reads every disk entry's
    /// metadata (not bodies).
    public func entries(now: Double = HTTPCache.now()) -> [CacheListing] {
        diskWriter?.drain()
        let (inMemory, rules) = locked { (memory.allEntries(), hostRules) }
        var byID: [String: (CacheEntry, Int, Bool, Bool)] = [:]
        for e in inMemory { byID[e.variant] = (e, e.body.count, true, false) }
        for (e, fileSize) in disk?.allEntries() ?? [] {
            if let m = byID[e.variant] {
                byID[e.variant] = (m.0, m.1, true, true)
            } else {
                let bodySize = fileSize - CacheEntryCodec.headerSize - CacheEntryCodec.encodeMetadata(e).count
                byID[e.variant] = (e, bodySize, false, true)
            }
        }
        return byID.values.map { (e, size, inMemory, onDisk) in
            let host = CacheKey(url: e.url)?.host ?? ""
            let rule = rules.filter { $0.matches(host) }.max { $0.specificity < $1.specificity }
            let c = evaluate(e, now: now, rule: rule)
            return CacheListing(url: e.url, status: e.status, size: size, age: c.age, freshnessLifetime: c.freshnessLifetime,
                                isFresh: c.isFresh, inMemory: inMemory, onDisk: onDisk,
                                vary: e.vary.map { $0.name + ": " + ($0.value ?? "(absent)") })
        }.sorted { ($0.url, $0.vary.joined()) < ($1.url, $1.vary.joined()) }
    }
}
