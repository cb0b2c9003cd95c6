import CLunetCurl
import Glibc

/// Setting a transfer's curl handle up: the URL, the header list (shared between transfers
/// whose lines are the same), the method and body (bytes, multipart, a file), decoding,
/// progress, timeouts, TLS, proxy and auth. What curl reads by pointer is the transfer's or
/// its EasyHandle's, alive while the transfer runs.
extension Transfer {
    /// What curl said to the options set so far: the first refusal is kept.
    struct SetoptStatus {
        var failed: CURLcode = CURLE_OK
        mutating func check(_ c: CURLcode) { if c != CURLE_OK && failed == CURLE_OK { failed = c } }
    }

    /// Configures `handle` for this request. Returns an error naming a bad option instead of
    /// starting a transfer that cannot work. `reusing`: the handle was left by a finished
    /// transfer with this one's `profile`; only what is this transfer's own is set.
    /// `loop`: the loop starting it (its shared URL and header list), passed rather than read
    /// from the weak `self.loop` (an atomic load each time).
    func configure(_ handle: EasyHandle, reusing: Bool = false, on loop: EventLoop) -> LunetError? {
        // Each passed on borrowed (a `let` and an optional's payload): no copy of the request.
        if let hop { return configure(handle, reusing: reusing, on: loop, hop) }
        return configure(handle, reusing: reusing, on: loop, request)
    }

    private func configure(_ handle: EasyHandle, reusing: Bool, on loop: EventLoop, _ request: HTTPRequest) -> LunetError? {
        let h = handle.raw
        self.handle = handle
        handle.transfer = Unmanaged.passUnretained(self)
        let hadURL = handle.url, hadList = handle.headerList
        var status = SetoptStatus()
        configureURL(handle, loop, request, &status)
        if !handle.pointersSet {
            let data = handle.opaque
            status.check(lunet_easy_setopt_ptr(h, CURLOPT_ERRORBUFFER, handle.errorBuffer))
            status.check(lunet_easy_setopt_ptr(h, CURLOPT_PRIVATE, data))
            status.check(lunet_easy_setopt_ptr(h, CURLOPT_WRITEDATA, data))
            status.check(lunet_easy_setopt_ptr(h, CURLOPT_HEADERDATA, data))
            status.check(lunet_easy_setopt_ptr(h, CURLOPT_SOCKOPTDATA, data))
            handle.pointersSet = true
        }
        configureHeaderList(handle, loop, request) { status.check($0) }
        if reusing {
            if hadURL != nil && hadURL === handle.url && hadList === handle.headerList { loop.handlesReusedAsTheyWere += 1 }
            return status.failed == CURLE_OK ? nil : refused(status.failed)
        }
        status.check(lunet_easy_setopt_long(h, CURLOPT_NOSIGNAL, 1))
        status.check(lunet_easy_setopt_write(h, CURLOPT_WRITEFUNCTION, transferWriteCallback))
        status.check(lunet_easy_setopt_write(h, CURLOPT_HEADERFUNCTION, transferHeaderCallback))
        status.check(lunet_easy_setopt_sockopt(h, transferSocketCallback))
        // Only web protocols, also after redirects: a script must not be sent to file:// or smb://.
        status.check(lunet_easy_setopt_str(h, CURLOPT_PROTOCOLS_STR, "http,https"))
        status.check(lunet_easy_setopt_str(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        if let problem = configureMethodAndBody(h, request, &status) { return problem }
        if let problem = configureReporting(h, &status) { return problem }
        if request.options.httpVersion?.isHTTP3 == true, let problem = LibcurlInfo.http3Missing(for: request.url) { return problem }
        configureConnection(h, request.options, &status)
        if let problem = configureAuth(h, request, &status) { return problem }
        return status.failed == CURLE_OK ? nil : refused(status.failed)
    }

    /// Strings go to curl through withCString: passed straight to a `const char *` parameter, a
    /// String is first copied into a new array (two allocations per call, every request). The
    /// URL parsed once for a run of requests to it (ParsedURL.swift), with its text as libcurl
    /// writes it (the effective URL); the text as given when libcurl does not parse it, so that
    /// libcurl's error names the problem. CURLOPT_CURLU wins over CURLOPT_URL, so a handle that
    /// had one is told it has none. A handle whose last transfer had this parsed URL has both
    /// set already (EasyHandle).
    private func configureURL(_ handle: EasyHandle, _ loop: EventLoop, _ request: HTTPRequest, _ status: inout SetoptStatus) {
        let h = handle.raw
        if let parsed = loop.parsedURL(request.url) {
            parsedURL = parsed
            if handle.url !== parsed {
                status.check(lunet_easy_setopt_str(h, CURLOPT_URL, parsed.normalized))
                status.check(lunet_easy_setopt_ptr(h, CURLOPT_CURLU, UnsafeMutableRawPointer(parsed.handle)))
                handle.url = parsed
            }
        } else {
            parsedURL = nil
            status.check(lunet_easy_setopt_ptr(h, CURLOPT_CURLU, nil))
            status.check(request.url.withCString { lunet_easy_setopt_str(h, CURLOPT_URL, $0) })
            handle.url = nil
        }
    }

    private func configureMethodAndBody(_ h: UnsafeMutableRawPointer, _ request: HTTPRequest, _ status: inout SetoptStatus) -> LunetError? {
        switch request.method {
        case "GET":
            status.check(lunet_easy_setopt_long(h, CURLOPT_HTTPGET, 1))
        case "HEAD":
            status.check(lunet_easy_setopt_long(h, CURLOPT_NOBODY, 1))
        case "POST":
            // POST (not a custom method) so that a 301/302/303 turns into a GET as browsers do.
            status.check(lunet_easy_setopt_long(h, CURLOPT_POST, 1))
        default:
            status.check(request.method.withCString { lunet_easy_setopt_str(h, CURLOPT_CUSTOMREQUEST, $0) })
        }
        if case .bytes(let b) = request.body {
            status.check(lunet_easy_setopt_off(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(b.count)))
            status.check(lunet_easy_setopt_ptr(h, CURLOPT_POSTFIELDS, b.count > 0 ? UnsafeMutableRawPointer(b.base) : emptyBody))
        } else if case .multipart(let parts) = request.body {
            if let problem = configureMultipart(h, parts, request.url) { return problem }
        } else if case .file(let path) = request.body {
            if let problem = configureUpload(h, path, request) { return problem }
        } else if case .stream = request.body {
            configureStreamedBody(h)
        } else if request.method == "POST" {
            status.check(lunet_easy_setopt_off(h, CURLOPT_POSTFIELDSIZE_LARGE, 0))
            status.check(lunet_easy_setopt_ptr(h, CURLOPT_POSTFIELDS, emptyBody))
        }
        return nil
    }

    /// Decoding, progress, the head as sent, a file to write to.
    private func configureReporting(_ h: UnsafeMutableRawPointer, _ status: inout SetoptStatus) -> LunetError? {
        let me = Unmanaged.passUnretained(self).toOpaque()   // the other callbacks' data
        if wantsProgress {
            status.check(lunet_easy_setopt_long(h, CURLOPT_NOPROGRESS, 0))
            status.check(lunet_easy_setopt_xferinfo(h, CURLOPT_XFERINFOFUNCTION, transferProgressCallback))
            status.check(lunet_easy_setopt_ptr(h, CURLOPT_XFERINFODATA, me))
        }
        if capturesSentHead {
            status.check(lunet_easy_setopt_long(h, CURLOPT_VERBOSE, 1))
            status.check(lunet_easy_setopt_debug(h, CURLOPT_DEBUGFUNCTION, transferDebugCallback))
            status.check(lunet_easy_setopt_ptr(h, CURLOPT_DEBUGDATA, me))
        }
        if let target = fileTarget {
            if let problem = target.open() { return problem }
            // Big reads for a file: a tenth of the system calls of curl's 16 KB default.
            status.check(lunet_easy_setopt_long(h, CURLOPT_BUFFERSIZE, 512 * 1024))
        }
        return nil
    }

    /// Redirects, timeouts, TLS, the proxy, client certificates, .netrc, the HTTP version.
    private func configureConnection(_ h: UnsafeMutableRawPointer, _ o: TransferOptions, _ status: inout SetoptStatus) {
        // A request with credentials follows its redirects in lunet (Transfer+Redirects.swift).
        status.check(lunet_easy_setopt_long(h, CURLOPT_FOLLOWLOCATION, (o.followRedirects ?? true) && !o.followsRedirectsItself ? 1 : 0))
        status.check(lunet_easy_setopt_long(h, CURLOPT_MAXREDIRS, o.maxRedirects ?? 10))
        if let t = o.timeout, t > 0 { status.check(lunet_easy_setopt_long(h, CURLOPT_TIMEOUT_MS, Int(max(1, t * 1000)))) }
        if let t = o.connectTimeout, t > 0 { status.check(lunet_easy_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, t * 1000)))) }
        if o.insecure == true {
            status.check(lunet_easy_setopt_long(h, CURLOPT_SSL_VERIFYPEER, 0))
            status.check(lunet_easy_setopt_long(h, CURLOPT_SSL_VERIFYHOST, 0))
        }
        if let ca = o.caFile { status.check(lunet_easy_setopt_str(h, CURLOPT_CAINFO, ca)) }
        if let proxy = o.proxy {
            status.check(lunet_easy_setopt_str(h, CURLOPT_PROXY, proxy))
        } else if CurlGlobal.environmentNamesNoProxy {
            // What libcurl would find in the environment, said once (see environmentNamesNoProxy).
            status.check(lunet_easy_setopt_str(h, CURLOPT_PROXY, ""))
            status.check(lunet_easy_setopt_str(h, CURLOPT_NOPROXY, ""))
        }
        if let cert = o.clientCertificate { status.check(lunet_easy_setopt_str(h, CURLOPT_SSLCERT, cert)) }
        if let key = o.clientKey { status.check(lunet_easy_setopt_str(h, CURLOPT_SSLKEY, key)) }
        if let pass = o.clientKeyPassword { status.check(lunet_easy_setopt_str(h, CURLOPT_KEYPASSWD, pass)) }
        if let netrc = o.netrcFile, !netrc.isEmpty {   // "": none, over a session that names one
            status.check(lunet_easy_setopt_long(h, CURLOPT_NETRC, Int(CURL_NETRC_OPTIONAL.rawValue)))
            status.check(lunet_easy_setopt_str(h, CURLOPT_NETRC_FILE, netrc))
        }
        if let v = o.httpVersion {
            let value: Int
            switch v {
            case .http1_0: value = CURL_HTTP_VERSION_1_0
            case .http1_1: value = CURL_HTTP_VERSION_1_1
            case .http2: value = CURL_HTTP_VERSION_2TLS
            case .http2PriorKnowledge: value = CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
            case .http3: value = 30       // CURL_HTTP_VERSION_3
            case .http3Only: value = 31   // CURL_HTTP_VERSION_3ONLY (both: libcurl 7.88's headers lack them)
            }
            // h2c on libcurl before 8.0: prior knowledge only for a connection of its own,
            // plain HTTP/2 to share one that answered (H2CReuse says why).
            if v == .http2PriorKnowledge && H2CReuse.broken, let origin = H2CReuse.origin(of: request.url) {
                h2cOrigin = origin
                if H2CReuse.isKnown(origin) {
                    status.check(lunet_easy_setopt_long(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2_0))
                    status.check(lunet_easy_setopt_long(h, CURLOPT_PIPEWAIT, 1))
                    return
                }
                status.check(lunet_easy_setopt_long(h, CURLOPT_FRESH_CONNECT, 1))
            }
            status.check(lunet_easy_setopt_long(h, CURLOPT_HTTP_VERSION, value))
        }
    }

    /// Digest, NTLM or Negotiate: libcurl answers the server's challenge.
    private func configureAuth(_ h: UnsafeMutableRawPointer, _ request: HTTPRequest, _ status: inout SetoptStatus) -> LunetError? {
        guard let a = request.options.curlAuth else { return nil }
        // CURLAUTH_DIGEST, _NEGOTIATE, _NTLM: macros Swift does not import (curl.h).
        let set: CURLcode
        switch a.scheme {
        case .digest: set = lunet_easy_setopt_long(h, CURLOPT_HTTPAUTH, 1 << 1)
        case .negotiate: set = lunet_easy_setopt_long(h, CURLOPT_HTTPAUTH, 1 << 2)
        case .ntlm: set = lunet_easy_setopt_long(h, CURLOPT_HTTPAUTH, 1 << 3)
        }
        // A libcurl built without the scheme refuses the option.
        if set == CURLE_NOT_BUILT_IN || set == CURLE_UNKNOWN_OPTION {
            return LunetError(.argument, "this libcurl (\(String(cString: lunet_curl_version()))) cannot do \(a.scheme.name) authentication", url: request.url)
        }
        status.check(set)
        status.check(a.user.withCString { lunet_easy_setopt_str(h, CURLOPT_USERNAME, $0) })
        status.check(a.password.withCString { lunet_easy_setopt_str(h, CURLOPT_PASSWORD, $0) })
        return nil
    }

    func refused(_ code: CURLcode) -> LunetError {
        LunetError(.argument, "a request option was refused: \(String(cString: lunet_curl_easy_strerror(code)))", url: currentURL)
    }

    /// Whether lunet removes the body's content codings (ContentDecoder; libcurl is never asked
    /// to, CURLOPT_ACCEPT_ENCODING stays unset): not for a file, which keeps the bytes as sent,
    /// nor when the request says `decompress = false`.
    var decodesBody: Bool { (request.options.decompress ?? true) && fileTarget == nil }

    /// The request's header lines, as a list curl reads while the transfer runs (always set,
    /// so that a reused handle never keeps the list of the transfer before).
    func configureHeaderList(_ handle: EasyHandle, _ loop: EventLoop, _ request: HTTPRequest, _ check: (CURLcode) -> Void) {
        let h = handle.raw
        // The Accept-Encoding line names the codings lunet removes (ContentCodings.decodable),
        // first in the list, where curl put its own for CURLOPT_ACCEPT_ENCODING (right after
        // Accept). (lunet's SigV4 signature leaves Accept-Encoding out: AWSSigV4.swift.)
        var additions: UInt8 = 0
        if decodesBody, !request.decides(header: "Accept-Encoding"), CurlGlobal.acceptEncodingLine != nil { additions |= 1 }
        // curl would label a body it was not told the type of as a form; say what RFC 9110
        // lets a recipient assume instead.
        if case .bytes = request.body, !request.decides(header: "Content-Type") { additions |= 2 }
        // Never wait a second for a 100 Continue that many servers do not send.
        if request.bodyCount > 0 && !request.headers.contains("Expect") { additions |= 4 }
        let fields = request.headers.fields
        if let last = loop.lastHeaderList, last.matches(fields, request.removedHeaders, additions) {
            headerList = last
            if handle.headerList !== last {
                check(lunet_easy_setopt_slist(h, CURLOPT_HTTPHEADER, last.list))
                handle.headerList = last
            }
            return
        }
        var list: UnsafeMutablePointer<curl_slist>? = nil
        if additions & 1 != 0, let line = CurlGlobal.acceptEncodingLine { list = line.withCString { lunet_curl_slist_append(list, $0) } }
        for (name, value) in fields {
            // "Name;" is curl's way to send a header with an empty value.
            let line = value.isEmpty ? "\(name);" : "\(name): \(value)"
            list = line.withCString { lunet_curl_slist_append(list, $0) }
        }
        if additions & 2 != 0 { list = lunet_curl_slist_append(list, "Content-Type: application/octet-stream") }
        // "Name:" tells curl not to send a header it would add itself (Accept, User-Agent).
        for name in request.removedHeaders { list = lunet_curl_slist_append(list, "\(name):") }
        if additions & 4 != 0 { list = lunet_curl_slist_append(list, "Expect:") }
        let made = CurlHeaderList(fields: fields, removed: request.removedHeaders, additions: additions, list: list)
        headerList = made
        loop.lastHeaderList = made
        check(lunet_easy_setopt_slist(h, CURLOPT_HTTPHEADER, list))
        handle.headerList = made
    }

    /// A curl MIME body: data parts are handed to curl by pointer (the request keeps them
    /// alive), file parts are read by curl in chunks while it sends.
    func configureMultipart(_ h: UnsafeMutableRawPointer, _ parts: [MultipartPart], _ url: String) -> LunetError? {
        let m = lunet_curl_mime_init(h)
        mime = m
        for part in parts {
            let p = lunet_curl_mime_addpart(m)
            lunet_curl_mime_name(p, part.name)
            switch part.content {
            case .bytes(let b):
                // curl copies the data.
                lunet_curl_mime_data(p, UnsafeRawPointer(b.base.map { UnsafeMutableRawPointer($0) } ?? emptyBody).assumingMemoryBound(to: CChar.self), b.count)
            case .file(let path):
                var info = stat()
                guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(path, R_OK) == 0 else {
                    return LunetError(.argument, "multipart part '\(part.name)': cannot read the file '\(path)'", url: url)
                }
                if lunet_curl_mime_filedata(p, path) != CURLE_OK {
                    return LunetError(.argument, "multipart part '\(part.name)': cannot read the file '\(path)'", url: url)
                }
            }
            if let filename = part.filename { lunet_curl_mime_filename(p, filename) }
            if let type = part.contentType { lunet_curl_mime_type(p, type) }
        }
        _ = lunet_easy_setopt_ptr(h, CURLOPT_MIMEPOST, UnsafeMutableRawPointer(m))
        return nil
    }

    /// An upload: curl reads the file through the read callback, in chunks.
    func configureUpload(_ h: UnsafeMutableRawPointer, _ path: String, _ request: HTTPRequest) -> LunetError? {
        var info = stat()
        uploadFD = open(path, O_RDONLY | O_CLOEXEC)
        guard uploadFD >= 0, fstat(uploadFD, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return LunetError(.io, "cannot read the file to upload '\(path)': \(String(cString: strerror(errno)))", url: request.url)
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = lunet_easy_setopt_read(h, CURLOPT_READFUNCTION, transferReadCallback)
        _ = lunet_easy_setopt_ptr(h, CURLOPT_READDATA, me)
        if request.method == "POST" {
            _ = lunet_easy_setopt_off(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(info.st_size))
        } else {
            _ = lunet_easy_setopt_long(h, CURLOPT_UPLOAD, 1)
            _ = lunet_easy_setopt_off(h, CURLOPT_INFILESIZE_LARGE, curl_off_t(info.st_size))
            if request.method != "PUT" { _ = lunet_easy_setopt_str(h, CURLOPT_CUSTOMREQUEST, request.method) }
        }
        return nil
    }


    /// An upload: curl reads the file through the read callback, in chunks (Transfer+Receive).
}

/// A stable address for an empty body (curl keeps the pointer it is given).
nonisolated(unsafe) private let emptyBody: UnsafeMutableRawPointer = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
