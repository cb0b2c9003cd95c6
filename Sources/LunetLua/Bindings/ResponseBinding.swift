import CLunetLua
import LunetCodecs
import LunetLuaStack
import LunetCore

/// What Lua reads of a response. lua/lunet/http.lua wraps these in the response object users
/// see, and caches each field there, so every conversion below runs at most once per response.
enum ResponseBinding {
    static let metatable = LuaUserdata.Kind("lunet.Response")

    private static func response(_ L: OpaquePointer, _ fn: String) -> HTTPResponse? {
        LuaUserdata.get(L, 1, HTTPResponse.self, metatable: metatable)
    }

    /// Pushes a response as Lua's response.new takes it: the response itself (what the lazy
    /// fields read), then status, reason, url, http_version and elapsed, what every response
    /// object starts with. Returns the count, 6: one call up carries the whole head.
    static func push(_ L: OpaquePointer, _ r: HTTPResponse) -> Int32 {
        pushStatus(L, r) + pushRestOfHead(LuaStack(L), r)
    }

    /// A plain request's response as its completion takes it (TransferBinding): the response
    /// itself, its status, and its body when it is small (`plainBodyLimit`), nil else; the rest
    /// of the head waits for `head`, a larger body for `body`. Returns the count, 3.
    static func pushPlain(_ L: OpaquePointer, _ r: HTTPResponse) -> Int32 {
        LuaUserdata.push(L, r, metatable: metatable)
        let s = LuaStack(L)
        s.push(r.status)
        if r.body.count <= plainBodyLimit { s.push(r.body) } else { s.pushNil() }
        return 3
    }

    /// The largest body a plain response starts with. Most scripts read the body of what they
    /// asked for: a small one comes in the completion's call, where fetching it later was a
    /// metamethod and a call into Swift; a larger one is copied into Lua only when it is read.
    static let plainBodyLimit = 4096

    /// The response itself and its status: how `push` starts. Returns the count, 2.
    static func pushStatus(_ L: OpaquePointer, _ r: HTTPResponse) -> Int32 {
        LuaUserdata.push(L, r, metatable: metatable)
        LuaStack(L).push(r.status)
        return 2
    }

    /// The head after the status: reason, url, http_version, elapsed. Returns the count, 4.
    private static func pushRestOfHead(_ s: LuaStack, _ r: HTTPResponse) -> Int32 {
        s.push(r.reason)
        s.push(r.url)
        s.push(r.httpVersion)
        s.push(r.elapsed)
        return 4
    }

    /// core.response_head(response): reason, url, http_version, elapsed, for a response made
    /// with its status only (response.lua fetches them together at the first use of one).
    static let head: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "head") else { return LuaErrorObject.badArgument(L, 1, "response_head", "response expected") }
        return pushRestOfHead(LuaStack(L), r)
    }

    /// { dns, connect, tls, ttfb, total }, seconds from the start of the transfer.
    static let timings: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "timings") else { return LuaErrorObject.badArgument(L, 1, "response_timings", "response expected") }
        let s = LuaStack(L)
        s.newTable(hash: 5)
        s.set(-1, "dns", r.timings.dns)
        s.set(-1, "connect", r.timings.connect)
        s.set(-1, "tls", r.timings.tls)
        s.set(-1, "ttfb", r.timings.ttfb)
        s.set(-1, "total", r.timings.total)
        return 1
    }

    /// core.response_load(response) -> duration, blocked, connecting, tls, waiting, receiving
    /// (microseconds: `HTTPResponse.Timings.loadPhases`), bytes sent, bytes received: what
    /// `lunet load` records of every request, in one call and no table.
    static let load: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "load") else { return LuaErrorObject.badArgument(L, 1, "response_load", "response expected") }
        let s = LuaStack(L)
        let t = r.timings, p = t.loadPhases
        s.push(p.duration); s.push(p.blocked); s.push(p.connecting); s.push(p.tls); s.push(p.waiting); s.push(p.receiving)
        s.push(t.bytesSent); s.push(t.bytesReceived)
        return 8
    }

    /// connections opened, redirects followed.
    static let connections: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "connections") else { return LuaErrorObject.badArgument(L, 1, "response_connections", "response expected") }
        let s = LuaStack(L)
        s.push(r.connectionsOpened)
        s.push(r.redirects)
        return 2
    }

    /// "miss", "hit", "revalidated", "stale", or nothing without a cache.
    static let cacheStatus: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "cache") else { return LuaErrorObject.badArgument(L, 1, "response_cache", "response expected") }
        guard let status = r.cacheStatus else { return 0 }
        LuaStack(L).push(status)
        return 1
    }

    /// For a download: bytes written, whether it started over, the file's size (or nothing).
    static let download: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "download") else { return LuaErrorObject.badArgument(L, 1, "response_download", "response expected") }
        guard let d = r.download else { return 0 }
        let s = LuaStack(L)
        s.push(Int(d.written))
        s.push(d.restarted)
        s.push(Int(d.size))
        return 3
    }

    /// The header fields as a flat list { name1, value1, name2, value2, ... } in arrival order.
    static let headers: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "headers") else { return LuaErrorObject.badArgument(L, 1, "response_headers", "response expected") }
        pushFlat(L, r.headers)
        return 1
    }

    /// The trailer fields after a chunked body, flat like the header fields.
    static let trailers: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "trailers") else { return LuaErrorObject.badArgument(L, 1, "response_trailers", "response expected") }
        pushFlat(L, r.trailers)
        return 1
    }

    /// core.response_field(response, name, in_trailers): one field's value as r.headers[name]
    /// (or r.trailers[name]) gives it, every value of that name joined by ", ", or nil, without
    /// making the whole table: lunet.grpc reads two fields of every answer.
    static let field: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "field") else { return LuaErrorObject.badArgument(L, 1, "response_field", "response expected") }
        let s = LuaStack(L)
        guard let name = s.string(2) else { return LuaErrorObject.badArgument(L, 2, "response_field", "string expected") }
        let values = (s.bool(3) ? r.trailers : r.headers).all(name)
        if values.isEmpty { s.pushNil() } else { s.push(values.count == 1 ? values[0] : values.joined(separator: ", ")) }
        return 1
    }

    static func pushFlat(_ L: OpaquePointer, _ headers: HTTPHeaders) {
        let s = LuaStack(L)
        s.newTable(array: Int32(headers.count * 2))
        var i = 1
        for (name, value) in headers {
            s.push(name); s.setRawIndex(-2, i)
            s.push(value); s.setRawIndex(-2, i + 1)
            i += 2
        }
    }

    static let body: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "body") else { return LuaErrorObject.badArgument(L, 1, "response_body", "response expected") }
        LuaStack(L).push(r.body)
        return 1
    }

    /// The body as UTF-8 text, converted from its charset (argument 2 overrides the detection).
    static let text: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "text") else { return LuaErrorObject.badArgument(L, 1, "response_text", "response expected") }
        let s = LuaStack(L)
        let charset = s.string(2) ?? Charset.detect(contentType: r.headers["Content-Type"], body: r.body.bytes)
        switch Charset.toUTF8(r.body.bytes, from: charset) {
        case .success(let utf8):
            s.push(utf8)
            return 1
        case .failure(var e):
            e.url = r.url
            LuaErrorObject.push(L, e)
            return LUNET_RAISE
        }
    }

    /// The body as XML: converted to UTF-8 from its charset first (the declaration inside may
    /// still name the old one, so it is not checked then).
    static let xml: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "xml") else { return LuaErrorObject.badArgument(L, 1, "response_xml", "response expected") }
        let charset = Charset.detect(contentType: r.headers["Content-Type"], body: r.body.bytes)
        var options = LuaXMLDecoder.Options()
        if Charset.isUTF8(charset) {
            return XMLModule.decode(L, UnsafeRawBufferPointer(r.body.bytes), options: options)
        }
        switch Charset.toUTF8(r.body.bytes, from: charset) {
        case .success(let utf8):
            options.ignoreEncoding = true
            return XMLModule.decode(L, UnsafeRawBufferPointer(utf8.bytes), options: options)
        case .failure(var e):
            e.url = r.url
            LuaErrorObject.push(L, e)
            return LUNET_RAISE
        }
    }

    static let protobuf: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "protobuf") else { return LuaErrorObject.badArgument(L, 1, "response_protobuf", "response expected") }
        return ProtobufModule.decode(L, UnsafeRawBufferPointer(r.body.bytes))
    }

    static let json: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "json") else { return LuaErrorObject.badArgument(L, 1, "response_json", "response expected") }
        return LuaJSONDecoder.decode(L, UnsafeRawBufferPointer(r.body.bytes))
    }

    /// What a curl command line needs besides the request itself to do what the transfer did
    /// (response.lua's curl_flags): TLS, client certificate, proxy, .netrc and libcurl's auth;
    /// secrets only as "there is one".
    private static func pushExportSettings(_ s: LuaStack, _ o: TransferOptions) {
        s.newTable(hash: 8)
        if o.insecure == true { s.set(-1, "insecure", true) }
        if let ca = o.caFile { s.set(-1, "ca_file", ca) }
        if let cert = o.clientCertificate { s.set(-1, "cert", cert) }
        if let key = o.clientKey { s.set(-1, "cert_key", key) }
        if o.clientKeyPassword != nil { s.set(-1, "cert_password", true) }
        if let proxy = o.proxy, !proxy.isEmpty { s.set(-1, "proxy", proxy) }
        if let netrc = o.netrcFile, !netrc.isEmpty { s.set(-1, "netrc", netrc) }
        if let v = o.httpVersion, v.isHTTP3 { s.set(-1, "http_version", v.rawValue) }
        if let auth = o.curlAuth {
            s.newTable(hash: 2)
            s.set(-1, "user", auth.user)
            s.setRawField(-2, auth.scheme.name.lowercased())
        }
        if let aws = o.awsCredentials {
            s.newTable(hash: 3)
            s.set(-1, "provider", aws.provider)
            s.set(-1, "key", aws.key)
            if aws.token != nil { s.set(-1, "token", true) }
            s.setRawField(-2, "aws_sigv4")
        }
    }

    /// { method, url, headers = flat list, body = string or nil, settings = (above) }
    static let request: lunet_SwiftFunction = { L in
        let L = L!
        guard let r = response(L, "request") else { return LuaErrorObject.badArgument(L, 1, "response_request", "response expected") }
        let s = LuaStack(L)
        s.newTable(hash: 4)
        s.set(-1, "method", r.request.method)
        s.set(-1, "url", r.request.url)
        pushFlat(L, r.request.headers)
        s.setRawField(-2, "headers")
        // What libcurl really sent (recorded transfers): its header lines, the jar's Cookie too.
        if let head = r.sentHead { s.set(-1, "sent_head", head) }
        pushExportSettings(s, r.request.options)
        s.setRawField(-2, "settings")
        switch r.request.body {
        case .bytes(let b):
            s.push(b)
            s.setRawField(-2, "body")
        case .multipart(let parts):
            s.newTable(array: Int32(parts.count))
            for (i, part) in parts.enumerated() {
                s.newTable(hash: 4)
                s.set(-1, "name", part.name)
                switch part.content {
                case .file(let path): s.set(-1, "file", path)
                case .bytes(let b): s.push(b); s.setRawField(-2, "data")
                }
                s.set(-1, "filename", part.filename)
                s.set(-1, "content_type", part.contentType)
                s.setRawIndex(-2, i + 1)
            }
            s.setRawField(-2, "multipart")
        case .file(let path):
            s.set(-1, "upload_file", path)
        case .stream:
            s.set(-1, "body_streamed", true)   // sent in pieces: nothing of it is kept
        case .none:
            break
        }
        return 1
    }
}

extension ResponseBinding {
    /// lunet.core's functions for responses: head, headers, body and its decodings, timings, the request made (CoreModule.open gathers each concern's).
    static let functions: [CoreFunction] = [
        CoreFunction("response_timings", timings),
        CoreFunction("response_load", load),
        CoreFunction("response_head", head),
        CoreFunction("response_connections", connections),
        CoreFunction("response_headers", headers),
        CoreFunction("response_trailers", trailers),
        CoreFunction("response_field", field),
        CoreFunction("response_body", body),
        CoreFunction("response_text", text),
        CoreFunction("response_json", json),
        CoreFunction("response_xml", xml),
        CoreFunction("response_protobuf", protobuf),
        CoreFunction("response_request", request),
        CoreFunction("response_download", download),
        CoreFunction("response_cache", cacheStatus),
    ]
}
