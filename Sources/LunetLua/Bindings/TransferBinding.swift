import CLunet
import LunetCore

/// core.send(session, request, callback) -> transfer, and core.cancel(transfer).
/// The callback runs on the loop with (response) or (nil, error object).
enum TransferBinding {
    static let metatable = "lunet.Transfer"

    static let send: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        guard let session = LuaUserdata.get(L, 1, Session.self, metatable: SessionBinding.metatable) else {
            return LuaErrorObject.badArgument(L, 1, "send", "session expected, got \(s.typeName(1))")
        }
        guard s.type(2) == LUA_TTABLE else { return LuaErrorObject.badArgument(L, 2, "send", "request table expected") }
        guard s.type(3) == LUA_TFUNCTION else { return LuaErrorObject.badArgument(L, 3, "send", "function expected") }
        guard let url = s.stringField(2, "url") else { return LuaErrorObject.raise(L, .argument, "a request needs a url") }

        var request = HTTPRequest(method: (s.stringField(2, "method") ?? "GET").uppercased(), url: url)
        var headers = HTTPHeaders()
        var removed: [String] = []
        for field in ["session_headers", "headers"] {
            if s.rawField(2, field) == LUA_TTABLE {
                let (h, r) = readHeaders(L, -1)
                headers = headers.merging(h)
                removed += r
            }
            s.pop()
        }
        request.headers = headers
        request.removedHeaders = removed
        if s.rawField(2, "body") == LUA_TSTRING, let bytes = s.bytes(-1) {
            request.body = .bytes(ByteBuffer(copying: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: bytes.count))
        }
        s.pop()
        if s.rawField(2, "multipart") == LUA_TTABLE { request.body = .multipart(multipartParts(L, -1)) }
        s.pop()
        if let path = s.stringField(2, "upload_file") { request.body = .file(path) }
        if let policy = s.stringField(2, "cache_policy") {
            guard let p = CachePolicy(rawValue: policy) else {
                return LuaErrorObject.raise(L, .argument, "option 'cache' must be \"default\", \"reload\", \"no_store\", \"prefer_cache\" or \"only_if_cached\", got \"\(policy)\"")
            }
            request.cachePolicy = p
        }

        // A download: { path, offset, range_start, on_whole = "restart" | "fail" }
        var target: FileTarget?
        if s.rawField(2, "download") == LUA_TTABLE, let path = s.stringField(-1, "path") {
            let rangeStart = s.integerField(-1, "range_start").map(Int64.init)
            target = FileTarget(path: path, offset: Int64(s.integerField(-1, "offset") ?? 0), rangeStart: rangeStart,
                                onWhole: s.stringField(-1, "on_whole") == "fail" ? .fail : .restart)
            target?.metaPath = s.stringField(-1, "meta")
            target?.startsWriteback = s.boolField(-1, "durable") == true
            target?.url = url
        }
        s.pop()
        let wantsProgress = s.boolField(2, "progress") == true
        let stream = s.boolField(2, "stream") == true
        if let o = options(L, 2) { request.options = o }

        let host = LuaHost.from(L)
        s.pushValue(3)
        let callback = host.reference(from: L)
        // on_events(downloaded, download_total, uploaded, upload_total, chunks): once a turn at most
        var events: Int32 = LUA_NOREF
        if s.rawField(2, "on_events") == LUA_TFUNCTION { events = host.reference(from: L) } else { s.pop() }
        let eventsRef = events
        let configure: (Transfer) -> Void = { [unowned host] t in
            t.fileTarget = target
            t.wantsProgress = wantsProgress
            t.streamChunks = stream
            guard eventsRef != LUA_NOREF else { return }
            t.onEvents = { [unowned host] t in
                host.call(eventsRef) { s in
                    s.push(Int(t.progress.download))
                    s.push(Int(t.progress.downloadTotal))
                    s.push(Int(t.progress.upload))
                    s.push(Int(t.progress.uploadTotal))
                    if t.pendingChunks.isEmpty {
                        s.pushNil()
                    } else {
                        s.newTable(array: Int32(t.pendingChunks.count))
                        for (i, chunk) in t.pendingChunks.enumerated() { s.push(chunk); s.setRawIndex(-2, i + 1) }
                    }
                    return 5
                }
            }
        }
        // Only a transfer with something to set up skips the cache (downloads, progress, chunks).
        let needsSetup = target != nil || wantsProgress || stream || eventsRef != LUA_NOREF
        let transfer = session.send(request, configure: needsSetup ? configure : nil) { [unowned host] result in
            defer { host.release(callback); host.release(eventsRef) }
            host.call(callback) { s in
                switch result {
                case .success(let response):
                    LuaUserdata.push(s.L, response, metatable: ResponseBinding.metatable)
                    return 1
                case .failure(let error):
                    s.pushNil()
                    LuaErrorObject.push(s.L, error)
                    return 2
                }
            }
        }
        LuaUserdata.push(L, transfer, metatable: metatable)
        return 1
    }

    /// core.cached_response(session, method, url, session_headers) -> response | nothing.
    /// What the session's cache can answer at once (`Session.immediateCachedResponse`): http.lua
    /// asks before it builds a task for a plain request, so a fresh hit costs no transfer, no
    /// task and no turn of the loop. Nothing means: send the request as usual.
    static let cachedResponse: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        guard let session = LuaUserdata.get(L, 1, Session.self, metatable: SessionBinding.metatable) else {
            return LuaErrorObject.badArgument(L, 1, "cached_response", "session expected, got \(s.typeName(1))")
        }
        guard let method = s.string(2), let url = s.string(3) else {
            return LuaErrorObject.badArgument(L, 2, "cached_response", "method and url strings expected")
        }
        var request = HTTPRequest(method: method, url: url)
        if s.type(4) == LUA_TTABLE {
            let (h, removed) = readHeaders(L, 4)
            request.headers = h
            request.removedHeaders = removed
        }
        guard let response = session.immediateCachedResponse(request) else { return 0 }
        LuaUserdata.push(L, response, metatable: ResponseBinding.metatable)
        return 1
    }

    /// Stops a transfer now; its callback runs at once with a `cancelled` error.
    static let cancel: lunet_SwiftFunction = { L in
        let L = L!
        guard let transfer = LuaUserdata.get(L, 1, Transfer.self, metatable: metatable) else {
            return LuaErrorObject.badArgument(L, 1, "cancel", "transfer expected")
        }
        let host = LuaHost.from(L)
        let reason = LuaStack(L).string(2) ?? "the request was cancelled"
        host.entered(from: L) { host.loop.cancel(transfer, reason: reason) }
        return 0
    }

    /// The list http.lua made: { { name =, data = | file =, filename =, content_type = }, ... }.
    static func multipartParts(_ L: OpaquePointer, _ index: Int32) -> [MultipartPart] {
        let s = LuaStack(L)
        let t = s.absolute(index)
        var parts: [MultipartPart] = []
        let n = s.rawLength(t)
        guard n > 0 else { return parts }
        for i in 1...n {
            guard s.rawIndex(t, i) == LUA_TTABLE else { s.pop(); continue }
            let name = s.stringField(-1, "name") ?? ""
            var content = MultipartPart.Content.bytes(ByteBuffer())
            if let path = s.stringField(-1, "file") {
                content = .file(path)
            } else if s.rawField(-1, "data") == LUA_TSTRING, let b = s.bytes(-1) {
                content = .bytes(ByteBuffer(copying: b.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: b.count))
                s.pop()
            } else {
                s.pop()
            }
            parts.append(MultipartPart(name: name, content: content, filename: s.stringField(-1, "filename"), contentType: s.stringField(-1, "content_type")))
            s.pop()
        }
        return parts
    }

    /// Header tables: { Name = "value" } or { Name = { "v1", "v2" } } (repeated) or a list of
    /// { name, value } pairs (order kept). A value of false removes a header the session set.
    static func readHeaders(_ L: OpaquePointer, _ index: Int32) -> (HTTPHeaders, removed: [String]) {
        let s = LuaStack(L)
        var h = HTTPHeaders()
        var removed: [String] = []
        s.forEach(index) {
            if s.type(-2) == LUA_TSTRING, let name = s.string(-2) {
                switch s.type(-1) {
                case LUA_TSTRING, LUA_TNUMBER: h.add(name, s.string(-1)!)
                case LUA_TBOOLEAN where !s.bool(-1): removed.append(name)
                case LUA_TTABLE:
                    let n = s.rawLength(-1)
                    if n > 0 { for i in 1...n { if s.rawIndex(-1, i) != LUA_TNIL, let v = s.string(-1) { h.add(name, v) }; s.pop() } }
                default: break
                }
            } else if s.type(-2) == LUA_TNUMBER, s.type(-1) == LUA_TTABLE {
                s.rawIndex(-1, 1); let name = s.string(-1); s.pop()
                s.rawIndex(-1, 2); let value = s.string(-1); s.pop()
                if let name, let value { h.add(name, value) }
            }
        }
        return (h, removed)
    }

    /// Transfer options from a request or session table (nil when none is set).
    static func options(_ L: OpaquePointer, _ index: Int32) -> TransferOptions? {
        let s = LuaStack(L)
        var o = TransferOptions()
        var any = false
        if let v = s.numberField(index, "timeout") { o.timeout = v; any = true }
        if let v = s.numberField(index, "connect_timeout") { o.connectTimeout = v; any = true }
        if let v = s.boolField(index, "follow") { o.followRedirects = v; any = true }
        if let v = s.integerField(index, "max_redirects") { o.maxRedirects = v; any = true }
        if s.rawField(index, "max_body") != LUA_TNIL {
            o.maxBody = s.bool(-1) ? s.integer(-1) : Int.max   // false: no limit
            any = true
        }
        s.pop()
        if let v = s.boolField(index, "insecure") { o.insecure = v; any = true }
        if let v = s.stringField(index, "ca_file") { o.caFile = v; any = true }
        if let v = s.stringField(index, "proxy") { o.proxy = v; any = true }
        if let v = s.stringField(index, "http_version") { o.httpVersion = HTTPVersionPreference(rawValue: v); any = true }
        if let v = s.boolField(index, "decompress") { o.decompress = v; any = true }
        return any ? o : nil
    }
}
