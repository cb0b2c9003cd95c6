import CLunetLua
import LunetLuaStack
import LunetCore

/// Sessions from Lua: core.session_new(cfg) and core.session_derive(parent, cfg). The Lua layer
/// (lua/lunet/http.lua) keeps the options users see; Swift keeps what transfers need.
enum SessionBinding {
    static let metatable = LuaUserdata.Kind("lunet.Session")

    static let new: lunet_SwiftFunction = { L in
        let L = L!
        let host = LuaHost.from(L)
        switch configuration(L, 1) {
        case .failure(let e):
            LuaErrorObject.push(L, e)
            return LUNET_RAISE
        case .success(let (config, cookies)):
            // A cookie jar lives in a curl share handle: libcurl must load first (it loads on
            // first network use), and if it cannot, that is an error the script can see.
            if case .none = cookies {} else if let problem = CurlGlobal.load() {
                LuaErrorObject.push(L, problem)
                return LUNET_RAISE
            }
            let jar: CookieJar?
            switch cookies {
            case .none: jar = nil
            case .memory: jar = CookieJar(loop: host.loop)
            case .file(let path): jar = CookieJar(loop: host.loop, file: path)
            }
            LuaUserdata.push(L, Session(loop: host.loop, configuration: config, cookies: jar), metatable: metatable)
            return 1
        }
    }

    /// A session that shares its parent's cookies and connections, with a new configuration.
    static let derive: lunet_SwiftFunction = { L in
        let L = L!
        guard let parent = LuaUserdata.get(L, 1, Session.self, metatable: metatable) else {
            return LuaErrorObject.badArgument(L, 1, "derive", "session expected")
        }
        switch configuration(L, 2) {
        case .failure(let e):
            LuaErrorObject.push(L, e)
            return LUNET_RAISE
        case .success(let (config, _)):
            LuaUserdata.push(L, parent.derived(config), metatable: metatable)
            return 1
        }
    }

    /// core.session_counters(session) -> preparations, cache lookups: the request path's own
    /// accounting (Session.preparations, Session.cacheLookups), for tests that count it.
    static let counters: lunet_SwiftFunction = { L in
        let L = L!
        guard let session = LuaUserdata.get(L, 1, Session.self, metatable: metatable) else {
            return LuaErrorObject.badArgument(L, 1, "session_counters", "session expected")
        }
        let s = LuaStack(L)
        s.push(session.preparations)
        s.push(session.cacheLookups)
        return 2
    }

    static let cookies: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        guard let session = LuaUserdata.get(L, 1, Session.self, metatable: metatable) else {
            return LuaErrorObject.badArgument(L, 1, "cookies", "session expected")
        }
        let lines = session.cookies?.all() ?? []
        s.newTable(array: Int32(lines.count))
        for (i, line) in lines.enumerated() {
            s.push(line)
            s.setRawIndex(-2, i + 1)
        }
        return 1
    }

    /// core.session_add_cookie(session, line): one Netscape cookie-file line into the jar (a
    /// named session's stored cookies). Needs a session made with cookies on.
    static let addCookie: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        guard let session = LuaUserdata.get(L, 1, Session.self, metatable: metatable) else {
            return LuaErrorObject.badArgument(L, 1, "add_cookie", "session expected")
        }
        guard let line = s.string(2), !line.contains("\n") else {
            return LuaErrorObject.badArgument(L, 2, "add_cookie", "one cookie-file line expected")
        }
        guard let jar = session.cookies else {
            return LuaErrorObject.raise(L, .argument, "this session keeps no cookies (cookies = false)")
        }
        jar.add(line)
        return 0
    }

    static let saveCookies: lunet_SwiftFunction = { L in
        let L = L!
        guard let session = LuaUserdata.get(L, 1, Session.self, metatable: metatable) else {
            return LuaErrorObject.badArgument(L, 1, "save_cookies", "session expected")
        }
        if let problem = session.cookies?.save() {
            LuaErrorObject.push(L, problem)
            return LUNET_RAISE
        }
        LuaStack(L).push(true)
        return 1
    }

    enum CookieChoice { case none, memory, file(String) }

    /// Reads a session's options table (already checked and normalised by http.lua).
    static func configuration(_ L: OpaquePointer, _ index: Int32) -> Result<(Session.Configuration, CookieChoice), LunetError> {
        let s = LuaStack(L)
        var c = Session.Configuration()
        guard s.type(index) == LUA_TTABLE else { return .success((c, .none)) }
        c.baseURL = s.stringField(index, "base_url")
        c.isImplicit = s.boolField(index, "_implicit") ?? false
        c.maxConcurrent = s.integerField(index, "max_concurrent")
        s.rawField(index, "cache")
        c.cache = LuaUserdata.get(L, -1, HTTPCache.self, metatable: CacheBinding.metatable)
        s.pop()
        c.options = TransferOptions.standard
        if let o = TransferBinding.options(L, index) { c.options = o.resolved(over: c.options) }
        if s.rawField(index, "auth") == LUA_TTABLE {
            // The flat form lunet.auth makes of a session's auth option: { scheme =, ... }.
            let auth = s.absolute(-1)
            let scheme = s.stringField(auth, "scheme") ?? ""
            let user = s.stringField(auth, "user") ?? "", password = s.stringField(auth, "password") ?? ""
            let name = s.stringField(auth, "name") ?? "", value = s.stringField(auth, "value") ?? ""
            switch scheme {
            case "basic": c.auth = .basic(user: user, password: password)
            case "bearer": c.auth = .bearer(value)
            case "digest": c.auth = .digest(user: user, password: password)
            case "ntlm": c.auth = .ntlm(user: user, password: password)
            case "negotiate": c.auth = .negotiate
            case "aws_sigv4":
                c.auth = .awsSigV4(AWSCredentials(provider: s.stringField(auth, "provider") ?? "", key: user, secret: password,
                                                  token: s.stringField(auth, "token")))
            case "api_key_header": c.auth = .apiKeyHeader(name: name, value: value)
            case "api_key_query": c.auth = .apiKeyQuery(name: name, value: value)
            default: break   // schemes lunet.auth runs itself (oauth2)
            }
        }
        s.pop()
        var cookies = CookieChoice.none
        switch s.rawField(index, "cookies") {
        case LUA_TBOOLEAN: cookies = s.bool(-1) ? .memory : .none
        case LUA_TSTRING: cookies = .file(s.string(-1)!)
        default: break
        }
        s.pop()
        return .success((c, cookies))
    }
}

extension SessionBinding {
    /// lunet.core's functions for sessions: made, derived, their cookies and counters (CoreModule.open gathers each concern's).
    static let functions: [CoreFunction] = [
        CoreFunction("session_new", new),
        CoreFunction("session_derive", derive),
        CoreFunction("session_cookies", cookies),
        CoreFunction("session_add_cookie", addCookie),
        CoreFunction("session_save_cookies", saveCookies),
        CoreFunction("session_counters", counters),
    ]
}
