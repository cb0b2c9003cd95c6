import CLunetLua
import LunetLuaStack
import LunetCore
import Glibc

/// core.send: the one way a request goes from Lua into the core (see `send`), core.cancel and
/// core.events_done for a transfer under way, core.transfer_head for a stream's head.
enum TransferBinding {

    /// core.send(session, callback, method, url, session_headers[, answer_at_once]) for a plain
    /// request (a method, a URL and the session's headers: `s:get(url)`, no table to make and
    /// read), or core.send(session, callback, request) with the table http.lua's build makes.
    /// Returns the transfer's number; callback(number, response, status, reason, url,
    /// http_version, elapsed) or callback(number, nil, error) runs once, later (never during
    /// this call), through the runtime's deliver. With
    /// answer_at_once, a response the session's cache can give now is returned instead, as
    /// nil, response, status, reason, url, http_version, elapsed, and the callback never runs:
    /// either way the request is prepared and looked up once.
    ///
    /// For a plain request argument 2 may be the request's task instead of a callback: the
    /// completion then goes to the function core.set_plain_completion named, with the task in
    /// place of the number (one function for all, no closure made per request), and a response
    /// comes as the response, its status and its body when small (ResponseBinding.pushPlain):
    /// (task, response, status, body or nil) or (task, nil, error).
    static let send: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        guard let session = LuaUserdata.get(L, 1, Session.self, metatable: SessionBinding.metatable) else {
            return LuaErrorObject.badArgument(L, 1, "send", "session expected, got \(s.typeName(1))")
        }
        let takesTask = s.type(2) == LUA_TTABLE && s.type(3) == LUA_TSTRING
        guard s.type(2) == LUA_TFUNCTION || takesTask else { return LuaErrorObject.badArgument(L, 2, "send", "function expected") }
        if takesTask && LuaHost.from(L).plainCompletionRef == LUA_NOREF {
            return LuaErrorObject.badArgument(L, 2, "send", "a task needs core.set_plain_completion first")
        }
        if s.type(3) == LUA_TTABLE { return sendTable(L, session) }
        guard let method = methodText(L, 3), let url = LuaHost.from(L).urlText(L, at: 4) else {
            return LuaErrorObject.badArgument(L, 3, "send", "a request table, or method and url strings expected")
        }
        // The request made in the call, after every other argument: a temporary moves into
        // begin's consuming parameter, where a local variable (or a temporary followed by an
        // argument still to evaluate) was copied, then dropped. (`consume` of the local is
        // refused in this closure.)
        let id = LuaHost.from(L).transfers.reserve(), atOnce = s.bool(6)
        return begin(L, id, session, plainRequest(L, method, url), events: LUA_NOREF, configure: nil, answeringAtOnce: atOnce)
    }

    /// A plain request: `method`, `url`, and the session's headers when argument 5 has them.
    private static func plainRequest(_ L: OpaquePointer, _ method: String, _ url: String) -> HTTPRequest {
        guard lua_type(L, 5) == LUA_TTABLE else { return HTTPRequest(method: method, url: url) }
        // Made whole in one call: a variable set after it was copied on its way out.
        let (headers, removed) = readHeaders(L, 5)
        return HTTPRequest(method: method, url: url, headers: headers, removedHeaders: removed)
    }

    /// The method string at `index`, in capitals: the literal for http.lua's verbs (no String
    /// made from the bytes, no UTF-8 check, no case check, every request), else the text
    /// uppercased. nil if it is no string.
    private static func methodText(_ L: OpaquePointer, _ index: Int32) -> String? {
        let t = lua_type(L, index)
        guard t == LUA_TSTRING || t == LUA_TNUMBER else { return nil }
        var len = 0
        guard let p = lunet_tolstring(L, index, &len) else { return nil }
        func matches(_ literal: StaticString) -> Bool { literal.utf8CodeUnitCount == len && memcmp(literal.utf8Start, p, len) == 0 }
        if matches("GET") { return "GET" }
        if matches("POST") { return "POST" }
        if matches("HEAD") { return "HEAD" }
        if matches("PUT") { return "PUT" }
        if matches("DELETE") { return "DELETE" }
        if matches("PATCH") { return "PATCH" }
        return uppercased(String(decoding: UnsafeRawBufferPointer(start: p, count: len), as: UTF8.self))
    }

    /// `method` in capitals; itself, with no new string, when it is (http.lua's verbs are).
    private static func uppercased(_ method: String) -> String {
        method.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }) ? method : method.uppercased()
    }

    /// core.set_plain_completion(fn): where the completions of requests sent with their task go
    /// (see `send`).
    static let setPlainCompletion: lunet_SwiftFunction = { L in
        let L = L!
        guard lua_type(L, 1) == LUA_TFUNCTION else { return LuaErrorObject.badArgument(L, 1, "set_plain_completion", "function expected") }
        let host = LuaHost.from(L)
        host.release(host.plainCompletionRef)
        lua_settop(L, 1)
        host.plainCompletionRef = host.reference(from: L)
        return 0
    }

    /// core.send with a request table (argument 3).
    private static func sendTable(_ L: OpaquePointer, _ session: Session) -> Int32 {
        let fields = RequestTable(L, at: 3)
        let request: HTTPRequest
        switch fields.request() {
        case .success(let r): request = r
        case .failure(let e): return LuaErrorObject.raise(L, .argument, e.message)
        }
        let host = LuaHost.from(L)
        let id = host.transfers.reserve()
        var events: Int32 = LUA_NOREF
        if fields.hasEvents {
            LuaStack(L).rawField(3, "on_events")
            events = host.reference(from: L)   // takes the function off the stack
        }
        let configure = fields.needsSetup ? transferSetup(host, fields, events: events, id: id) : nil
        return begin(L, id, session, request, events: events, configure: configure, answeringAtOnce: false)
    }

    /// What a transfer of a request table is given before it starts: its file, whether it
    /// reports progress and streams chunks, and its on_events(downloaded, download_total,
    /// uploaded, upload_total, chunks, transfer id), called when progress or chunks wait, and
    /// never again before core.events_done(transfer id) says the call before is through
    /// (Transfer.consumerFinished).
    private static func transferSetup(_ host: LuaHost, _ fields: RequestTable, events eventsRef: Int32, id: Int) -> (Transfer) -> Void {
        let target = fields.target, wantsProgress = fields.wantsProgress, stream = fields.stream
        return { [unowned host] t in
            t.fileTarget = target
            t.wantsProgress = wantsProgress
            t.streamChunks = stream
            guard eventsRef != LUA_NOREF else { return }
            t.onEvents = { [unowned host] t, chunks in
                host.call(eventsRef) { s in
                    s.push(Int(t.progress.download))
                    s.push(Int(t.progress.downloadTotal))
                    s.push(Int(t.progress.upload))
                    s.push(Int(t.progress.uploadTotal))
                    if chunks.isEmpty {
                        s.pushNil()
                    } else {
                        s.newTable(array: Int32(chunks.count))
                        for (i, chunk) in chunks.enumerated() { s.push(chunk); s.setRawIndex(-2, i + 1) }
                    }
                    s.push(id)
                    return 6
                }
            }
        }
    }

    /// Sends `request` for core.send (the callback is argument 2). Pushes the transfer's number
    /// (1 result), or what the cache answered at once (7 results, see `send`).
    private static func begin(_ L: OpaquePointer, _ id: Int, _ session: Session, _ request: consuming HTTPRequest, events eventsRef: Int32,
                              configure: ((Transfer) -> Void)?, answeringAtOnce: Bool) -> Int32 {
        let host = LuaHost.from(L)
        // The callback's (or the task's) reference, taken before the transfer starts and let go
        // at once for an answer at once: a constant the completion captures (a variable set
        // after `send` was a box allocated for every request).
        lua_pushvalue(L, 2)
        let callback = host.reference(from: L)
        let viaTask = lua_type(L, 2) == LUA_TTABLE
        let sent = session.send(consume request, configure: configure, answeringAtOnce: answeringAtOnce) { [unowned host] result in
            host.transfers.remove(id)
            defer { host.release(callback); host.release(eventsRef) }
            let push: (LuaStack) -> Int32 = { s in
                if viaTask { lunet_getref(s.L, callback) } else { s.push(id) }
                switch result {
                case .success(let response):
                    // A plain request's completion takes the status and a small body only
                    // (http.lua's plain_completed): the rest of the head is fetched if asked for.
                    return 1 + (viaTask ? ResponseBinding.pushPlain(s.L, response) : ResponseBinding.push(s.L, response))
                case .failure(let error):
                    s.pushNil()
                    LuaErrorObject.push(s.L, error)
                    return 3
                }
            }
            // The plain completion is a delivery itself (http.lua: runtime.delivering).
            if viaTask { host.deliverDirectly(host.plainCompletionRef, push) } else { host.deliver(callback, push) }
        }
        host.requestStarted()
        let s = LuaStack(L)
        switch sent {
        case .answered(let response):
            host.release(eventsRef)
            host.release(callback)
            host.transfers.remove(id)   // no completion will free the number
            s.pushNil()
            return 1 + ResponseBinding.push(L, response)
        case .started(let transfer):
            // Every outcome, failures included, reaches the callback on a later turn, which
            // frees the number; a transfer already finished is not listed under it (there is
            // nothing left to cancel).
            if transfer.state != .finished { host.transfers.set(id, transfer) }
            s.push(id)
            return 1
        }
    }

    /// The transfer whose number is argument 1: .found, .gone (finished or unknown: nothing to
    /// do), or .bad after pushing the argument error for `function`.
    private enum Lookup { case found(Transfer, LuaHost), gone, bad }
    private static func transfer(_ L: OpaquePointer, _ function: String) -> Lookup {
        guard let id = LuaStack(L).integer(1), lua_type(L, 1) == LUA_TNUMBER else {
            _ = LuaErrorObject.badArgument(L, 1, function, "transfer id expected")
            return .bad
        }
        let host = LuaHost.from(L)
        guard let t = host.transfers[id] else { return .gone }
        return .found(t, host)
    }

    /// Stops a transfer now; its callback runs at once with a `cancelled` error.
    static let cancel: lunet_SwiftFunction = { L in
        let L = L!
        switch transfer(L, "cancel") {
        case .bad: return LUNET_RAISE
        case .gone: return 0   // a transfer that has finished is no longer listed: nothing to stop
        case .found(let t, let host):
            let reason = LuaStack(L).string(2) ?? "the request was cancelled"
            host.entered(from: L) { host.loop.cancel(t, reason: reason) }
            return 0
        }
    }

    /// core.transfer_send(transfer id, bytes): the next piece of a body sent in pieces (a request
    /// with send_stream), and the bytes queued and not yet sent (an empty piece only asks);
    /// core.transfer_close_send(transfer id): no more pieces. Nothing for a finished or unknown
    /// transfer (its call has ended).
    static let transferSend: lunet_SwiftFunction = { L in
        let L = L!
        switch transfer(L, "transfer_send") {
        case .bad: return LUNET_RAISE
        case .gone: return 0
        case .found(let t, let host):
            guard let bytes = LuaStack(L).bytes(2) else { return LuaErrorObject.badArgument(L, 2, "transfer_send", "string expected") }
            let piece = ByteBuffer(copying: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: bytes.count)
            host.entered(from: L) { t.sendPiece(piece) }
            LuaStack(L).push(t.queuedToSend)
            return 1
        }
    }

    static let transferCloseSend: lunet_SwiftFunction = { L in
        let L = L!
        switch transfer(L, "transfer_close_send") {
        case .bad: return LUNET_RAISE
        case .gone: return 0
        case .found(let t, let host):
            host.entered(from: L) { t.closeSending() }
            return 0
        }
    }

    /// core.events_done(transfer id): the events callback's consumer is through with the batch
    /// it was handed (see core.send's on_events). A finished or unknown transfer: nothing.
    static let eventsDone: lunet_SwiftFunction = { L in
        let L = L!
        switch transfer(L, "events_done") {
        case .bad: return LUNET_RAISE
        case .gone: return 0
        case .found(let t, let host):
            host.entered(from: L) { t.consumerFinished() }
            return 0
        }
    }

    /// core.transfer_head(transfer id) -> status, content type: the head of the response a
    /// transfer is receiving now (for a stream that must check it before its first event).
    /// Nothing for a finished or unknown transfer.
    static let transferHead: lunet_SwiftFunction = { L in
        let L = L!
        let head: (status: Int, headers: HTTPHeaders)
        switch transfer(L, "transfer_head") {
        case .bad: return LUNET_RAISE
        case .gone: return 0
        case .found(let t, _): head = t.receivedHead
        }
        let s = LuaStack(L)
        // core.transfer_head(id, true): every field, as a flat { name, value, ... } list. (Read
        // before anything is pushed: index 2 would then be the status.)
        let everyField = s.bool(2)
        s.push(head.status)
        if everyField {
            ResponseBinding.pushFlat(L, head.headers)
            return 2
        }
        if let type = head.headers["Content-Type"] { s.push(type) } else { s.pushNil() }
        return 2
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
        s.forEach(index) {
            if s.type(-2) == LUA_TSTRING, let key = s.string(-2), applyOption(key, s, &o) { any = true }
        }
        return any ? o : nil
    }

    /// Reads the transfer option `key` from the value on top of the stack into `o`; false when
    /// `key` names no transfer option (or its value is of no use to it).
    static func applyOption(_ key: String, _ s: LuaStack, _ o: inout TransferOptions) -> Bool {
        switch key {
        case "timeout": guard let v = s.number(-1) else { return false }; o.timeout = v
        case "connect_timeout": guard let v = s.number(-1) else { return false }; o.connectTimeout = v
        case "follow": o.followRedirects = s.bool(-1)
        case "max_redirects": guard let v = s.integer(-1) else { return false }; o.maxRedirects = v
        case "max_body": o.maxBody = s.bool(-1) ? s.integer(-1) : Int.max   // false: no limit
        case "_grpc_max_message": guard let v = s.integer(-1) else { return false }; o.grpcMaxMessage = v
        case "insecure": o.insecure = s.bool(-1)
        case "ca_file": guard let v = s.string(-1) else { return false }; o.caFile = v
        case "proxy": guard let v = s.string(-1) else { return false }; o.proxy = v
        case "http_version": guard let v = s.string(-1) else { return false }; o.httpVersion = HTTPVersionPreference(rawValue: v)
        case "decompress": o.decompress = s.bool(-1)
        case "cert": guard let v = s.string(-1) else { return false }; o.clientCertificate = v
        case "cert_key": guard let v = s.string(-1) else { return false }; o.clientKey = v
        case "cert_password": guard let v = s.string(-1) else { return false }; o.clientKeyPassword = v
        case "netrc_file": guard let v = s.string(-1) else { return false }; o.netrcFile = v
        case "record_head": o.recordsSentHead = s.bool(-1)
        default: return false
        }
        return true
    }
}

extension TransferBinding {
    /// lunet.core's functions for transfers: sending a request, its completion, cancelling, events, a body sent as it is given (CoreModule.open gathers each concern's).
    static let functions: [CoreFunction] = [
        CoreFunction("send", send),
        CoreFunction("set_plain_completion", setPlainCompletion),
        CoreFunction("cancel", cancel),
        CoreFunction("events_done", eventsDone),
        CoreFunction("transfer_head", transferHead),
        CoreFunction("transfer_send", transferSend),
        CoreFunction("transfer_close_send", transferCloseSend),
    ]
}
