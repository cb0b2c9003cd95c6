import CLunetLua
import LunetLuaStack
import LunetCore

/// WebSockets from Lua (lua/lunet/websocket.lua holds the API users see):
///   core.websocket_open(session, url, headers, protocols, opts, callback) -> id
///   core.websocket_send(id, "text" | "binary" | "ping", data)
///   core.websocket_close(id, code, reason)
///   core.websocket_pause(id, paused)
/// The callback gets ("open", subprotocol), ("text" | "binary" | "ping" | "pong", data),
/// ("closed", code, reason) or ("failed", error object, close code), in order; after "closed"
/// or "failed" nothing more, and the callback is released.
enum WebSocketBinding {
    static let open: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        guard let session = LuaUserdata.get(L, 1, Session.self, metatable: SessionBinding.metatable) else {
            return LuaErrorObject.badArgument(L, 1, "websocket", "session expected")
        }
        guard let url = s.string(2) else { return LuaErrorObject.badArgument(L, 2, "websocket", "URL string expected") }
        guard s.type(6) == LUA_TFUNCTION else { return LuaErrorObject.badArgument(L, 6, "websocket", "function expected") }
        var own = HTTPHeaders()
        if s.type(3) == LUA_TTABLE { own = TransferBinding.readHeaders(L, 3).0 }
        var protocols: [String] = []
        if s.type(4) == LUA_TTABLE {
            let n = s.rawLength(4)
            if n > 0 { for i in 1...n { if s.rawIndex(4, i) == LUA_TSTRING, let p = s.string(-1) { protocols.append(p) }; s.pop() } }
        }
        var options = TransferOptions()
        var maxMessage = 16 << 20
        if s.type(5) == LUA_TTABLE {
            options = TransferBinding.options(L, 5) ?? TransferOptions()
            if let m = s.integerField(5, "max_message"), m > 0 { maxMessage = m }
        }
        // The session's fields (User-Agent, its headers, auth) under this connection's own:
        // prepared as for an http(s) request to the same place.
        let connection: WebSocketConnection
        do {
            // Relative URLs resolve against the session's base_url (ws:, wss:, http: or https:).
            var request = HTTPRequest(method: "GET", url: try session.resolve(url, webSocket: true))
            request.headers = own
            let prepared = try session.prepare(request)
            connection = try WebSocketConnection(loop: session.loop, url: prepared.url, headers: prepared.headers, protocols: protocols,
                                                 options: options.resolved(over: prepared.options), maxMessage: maxMessage)
        } catch let error as LunetError {
            LuaErrorObject.push(L, error)
            return LUNET_RAISE
        } catch {
            return LuaErrorObject.raise(L, .argument, "\(error)")
        }
        let host = LuaHost.from(L)
        s.pushValue(6)
        let callback = host.reference(from: L)
        let id = host.newTransferID()
        host.websocketsByID[id] = (connection, callback)
        connection.onEvent = { [unowned host] event in
            var final = false
            host.call(callback) { s in
                let (count, last) = pushEvent(s, event)
                final = last
                return count
            }
            if final {
                host.websocketsByID[id] = nil
                host.release(callback)
            }
        }
        connection.start()
        s.push(id)
        return 1
    }

    /// The callback's arguments for `event`: how many were pushed, and whether it is the last
    /// event ("closed" or "failed").
    private static func pushEvent(_ s: LuaStack, _ event: WebSocketConnection.Event) -> (Int32, final: Bool) {
        switch event {
        case .open(let chosen):
            s.push("open")
            if let chosen { s.push(chosen) } else { s.pushNil() }
            return (2, false)
        case .message(let m):
            switch m {
            case .text(let t): s.push("text"); s.push(t)
            case .binary(let b): s.push("binary"); b.withUnsafeBytes { lunet_pushbytes(s.L, $0.baseAddress, $0.count) }
            case .ping(let b): s.push("ping"); b.withUnsafeBytes { lunet_pushbytes(s.L, $0.baseAddress, $0.count) }
            case .pong(let b): s.push("pong"); b.withUnsafeBytes { lunet_pushbytes(s.L, $0.baseAddress, $0.count) }
            case .close: s.push("closing"); s.pushNil()
            }
            return (2, false)
        case .closed(let code, let reason):
            s.push("closed")
            if let code { s.push(Int(code)) } else { s.pushNil() }
            s.push(reason)
            return (3, true)
        case .failed(let error, let code):
            s.push("failed")
            LuaErrorObject.push(s.L, error)
            if let code { s.push(Int(code)) } else { s.pushNil() }
            return (3, true)
        }
    }

    private static func connection(_ L: OpaquePointer) -> WebSocketConnection? {
        guard let id = LuaStack(L).integer(1), lua_type(L, 1) == LUA_TNUMBER else { return nil }
        return LuaHost.from(L).websocketsByID[id]?.connection
    }

    static let send: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        guard let ws = connection(L) else { return 0 }   // closed: nothing to send on
        let kind = s.string(2)!, bytes = s.bytes(3)!   // declared (functions, below)
        let data = Array(UnsafeRawBufferPointer(bytes))
        LuaHost.from(L).entered(from: L) {
            switch kind {
            case "binary": ws.sendBinary(data)
            case "ping": ws.ping(data)
            default: ws.sendText(String(decoding: data, as: UTF8.self))
            }
        }
        return 0
    }

    static let close: lunet_SwiftFunction = { L in
        let L = L!
        let s = LuaStack(L)
        guard let ws = connection(L) else { return 0 }
        let code = s.integer(2) ?? 1000
        guard code >= 0 && code <= 0xFFFF, WebSocketMessageAssembler.isValidCloseCode(UInt16(code)) else {
            return LuaErrorObject.raise(L, .argument, "close code \(code) may not be sent (1000-1003, 1007-1014 or 3000-4999)")
        }
        let reason = s.string(3) ?? ""
        LuaHost.from(L).entered(from: L) { ws.close(code: UInt16(code), reason: reason) }
        return 0
    }

    static let pause: lunet_SwiftFunction = { L in
        let L = L!
        guard let ws = connection(L) else { return 0 }
        let paused = LuaStack(L).bool(2)
        LuaHost.from(L).entered(from: L) { if paused { ws.pauseReading() } else { ws.resumeReading() } }
        return 0
    }
}

extension WebSocketBinding {
    /// lunet.core's functions for WebSocket connections (CoreModule.open gathers each concern's).
    static let functions: [CoreFunction] = [
        CoreFunction("websocket_open", open),
        CoreFunction("websocket_send", send, .flag("connection"), .string("kind"), .bytes("message")),
        CoreFunction("websocket_close", close),
        CoreFunction("websocket_pause", pause),
    ]
}
