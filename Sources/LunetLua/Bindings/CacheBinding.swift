import CLunetLua
import LunetLuaStack
import LunetCore

/// The HTTP cache from Lua: core.cache_new(cfg) and what a cache object's methods call.
enum CacheBinding {
    static let metatable = LuaUserdata.Kind("lunet.HTTPCache")

    private static func cache(_ L: OpaquePointer) -> HTTPCache? {
        LuaUserdata.get(L, 1, HTTPCache.self, metatable: metatable)
    }

    /// core.cache_new{ dir = path | false, memory = bytes, disk = bytes }
    static let new: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        var config = HTTPCache.Configuration()
        // Writes are renamed into place (never torn), but not fsynced: a crash may lose the
        // newest entries, and the loop never waits on the disk.
        config.syncWrites = false
        config.directory = HTTPCache.defaultDirectory()
        if s.type(1) == LUA_TTABLE {
            switch s.rawField(1, "dir") {
            case LUA_TSTRING: config.directory = HTTPCache.expandingTilde(s.string(-1)!)
            case LUA_TBOOLEAN where !s.bool(-1): config.directory = nil
            default: break
            }
            s.pop()
            if let m = s.integerField(1, "memory") { config.memoryLimit = m }
            if let d = s.integerField(1, "disk") { config.diskLimit = d }
        }
        LuaUserdata.push(L, HTTPCache(config), metatable: metatable)
        return 1
    }

    static let rule: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        guard let c = cache(L) else { return LuaErrorObject.badArgument(L, 1, "rule", "cache expected") }
        guard let host = s.string(2), let ttl = s.number(3) else { return LuaErrorObject.badArgument(L, 2, "rule", "{ host = \"*.example.com\", ttl = seconds } expected") }
        do throws(LunetError) {
            try c.rule(host: host, ttl: ttl)
        } catch {
            LuaErrorObject.push(L, error)
            return LUNET_RAISE
        }
        return 0
    }

    static let stats: lunet_SwiftFunction = { L in
        let L = L!
        guard let c = cache(L) else { return LuaErrorObject.badArgument(L, 1, "stats", "cache expected") }
        let st = c.stats()
        let s = LuaStack(L)
        s.newTable(hash: 16)
        s.set(-1, "hits", st.hits)
        s.set(-1, "misses", st.misses)
        s.set(-1, "validations", st.validations)
        s.set(-1, "revalidations", st.revalidations)
        s.set(-1, "stores", st.stores)
        s.set(-1, "invalidations", st.invalidations)
        s.set(-1, "memory_entries", st.memoryEntries)
        s.set(-1, "memory_bytes", st.memoryBytes)
        s.set(-1, "memory_limit", st.memoryLimit)
        s.set(-1, "disk_entries", st.diskEntries)
        s.set(-1, "disk_bytes", st.diskBytes)
        s.set(-1, "disk_limit", st.diskLimit)
        s.set(-1, "dir", st.diskDirectory)
        s.set(-1, "disk_off", st.diskDisabledReason)
        s.set(-1, "last_disk_error", st.lastDiskError)
        return 1
    }

    static let clear: lunet_SwiftFunction = { L in
        guard let c = cache(L!) else { return LuaErrorObject.badArgument(L!, 1, "clear", "cache expected") }
        c.clear()
        return 0
    }

    static let purge: lunet_SwiftFunction = { L in
        let L = L!
        guard let c = cache(L), let url = LuaStack(L).string(2) else { return LuaErrorObject.badArgument(L, 2, "purge", "a URL expected") }
        LuaStack(L).push(c.purge(url))
        return 1
    }

    /// What is stored: { { url, status, size, age, ttl, fresh, memory, disk }, ... }
    static let entries: lunet_SwiftFunction = { L in
        let L = L!
        guard let c = cache(L) else { return LuaErrorObject.badArgument(L, 1, "entries", "cache expected") }
        let list = c.entries()
        let s = LuaStack(L)
        s.newTable(array: Int32(list.count))
        for (i, e) in list.enumerated() {
            s.newTable(hash: 8)
            s.set(-1, "url", e.url)
            s.set(-1, "status", e.status)
            s.set(-1, "size", e.size)
            s.set(-1, "age", e.age)
            s.set(-1, "ttl", e.freshnessLifetime)
            s.set(-1, "fresh", e.isFresh)
            s.set(-1, "memory", e.inMemory)
            s.set(-1, "disk", e.onDisk)
            s.setRawIndex(-2, i + 1)
        }
        return 1
    }
}

extension CacheBinding {
    /// lunet.core's functions for HTTP caches: made, rules, statistics, entries (CoreModule.open gathers each concern's).
    static let functions: [CoreFunction] = [
        CoreFunction("cache_new", new),
        CoreFunction("cache_rule", rule),
        CoreFunction("cache_stats", stats),
        CoreFunction("cache_clear", clear),
        CoreFunction("cache_purge", purge),
        CoreFunction("cache_entries", entries),
    ]
}
