import CLunetSystem
import Glibc

/// One request on one curl easy handle, from `start` until its completion has run.
/// Owned by the loop thread; the loop keeps it alive while curl holds its handle.
public final class Transfer {
    public enum State { case created, running, finished }
    public typealias Completion = (Result<HTTPResponse, LunetError>) -> Void

    /// The request being sent: the one made, or the next hop's when the transfer follows its
    /// own redirects (Transfer+Redirects.swift).
    public internal(set) var request: HTTPRequest
    public internal(set) var state: State = .created
    /// Set by Lua bindings and Swift callers alike; any object to keep alive with the transfer.
    public var userInfo: AnyObject?

    /// The loop's handle the transfer runs on, with what curl keeps by pointer (nil before it
    /// starts and once it is released).
    var handle: EasyHandle?
    /// Its curl easy handle.
    var easy: UnsafeMutableRawPointer? { handle?.raw }
    /// Its key in the loop's table of running transfers (-1: not running).
    var runningKey = -1
    /// The profile the loop started this transfer's handle with (nil: its handle is reset after).
    var handleProfile: Profile?
    var completion: Completion?
    // Curl reads these by pointer while the transfer runs.
    /// The header lines curl reads while the transfer runs, shared with other transfers whose
    /// lines are the same (CurlHeaderList.swift).
    var headerList: CurlHeaderList?
    var mime: OpaquePointer?
    /// The URL handle curl reads while the transfer runs (see `configure`).
    var parsedURL: ParsedURL?
    // What arrives.
    let body = ByteBuffer()
    /// The header lines of the response being received, as curl handed them over: they are
    /// parsed into fields only when something reads them (most responses are never asked).
    let headerLines = ByteBuffer()
    /// Field lines after the body (a chunked body's trailer section), kept out of `headerLines`.
    /// Made when the first such line arrives: few responses have any (an allocation less for
    /// the others).
    var trailerLines: ByteBuffer?
    var headers: HTTPHeaders { HTTPHeaders(parsingLines: headerLines.bytes) }
    /// The reason phrase of the last status line, nil when it had none (the usual phrase for
    /// the status then stands in).
    var reasonText: String?
    /// Set from a callback that stopped the transfer on purpose (a body over max_body).
    var abortReason: LunetError?
    let maxBody: Int?
    /// The status of the response being received (each redirect or 100 starts a new one).
    var currentStatus = 0
    /// The blank line that ends the current response's header block has arrived. libcurl 7.88
    /// reports success for a reply cut off inside its headers (status 200, no fields, no body):
    /// a transfer that ends without it failed (EventLoop checks).
    var headerBlockEnded = false
    /// libcurl's decoding is off for the response being received: it names a coding libcurl
    /// cannot remove, so its body is handed through as it arrived (`passUnknownCodings`).
    var decodingSuspended = false

    // MARK: downloads, uploads, progress

    /// Where a 2xx body goes instead of memory (a download).
    public var fileTarget: FileTarget?
    /// When set, the body arrives as chunks handed to `onEvents` (and is not kept in memory).
    public var streamChunks = false
    /// Whether curl reports progress (see `progress`).
    public var wantsProgress = false
    /// An event stream's: on the loop's stream pool (HTTPRequest.longLived).
    var longLived: Bool { request.longLived }
    /// Keep the request head exactly as libcurl sent it (HAR recordings: it has the Cookie
    /// header the jar added, which the prepared request does not). The last one, after redirects.
    var capturesSentHead: Bool { request.options.recordsSentHead == true }
    lazy var sentHead = ByteBuffer()   // made only for a transfer that captures it
    /// Runs on the loop when progress or chunks are waiting, with the chunks that arrived since
    /// the last call. It hands them to a consumer; nothing more is handed over until the
    /// consumer says it is done (`consumerFinished`), so a consumer that waits never sees a
    /// second batch before the first is through, and chunks arrive once, in order.
    public var onEvents: ((Transfer, [ByteBuffer]) -> Void)?
    private var pendingChunks: [ByteBuffer] = []
    /// Bytes held for the consumer: chunks waiting and the batch it is working on. Past
    /// `chunkBufferLimit` the body is paused (libcurl's CURL_WRITEFUNC_PAUSE) until it is done.
    private var bufferedChunkBytes = 0
    private var pendingChunkBytes = 0
    public var chunkBufferLimit = 1 << 20
    /// A batch was handed over and its consumer has not finished.
    public private(set) var consumerBusy = false
    /// The body is paused because the consumer is behind.
    private(set) var pausedForConsumer = false
    /// The status and header fields of the response being received (the last one, after
    /// redirects and 100s), for consumers of a stream that must look at them first.
    public var receivedHead: (status: Int, headers: HTTPHeaders) { (currentStatus, headers) }
    /// The outcome of a transfer that ended while its consumer still had events to go
    /// through: it is delivered once they are (see `finish`).
    private var deferredResult: Result<HTTPResponse, LunetError>?
    /// (downloaded, download total, uploaded, upload total) as curl last reported them.
    public private(set) var progress: (download: Int64, downloadTotal: Int64, upload: Int64, uploadTotal: Int64) = (0, 0, 0, 0)
    var eventful = false
    weak var loop: EventLoop?
    var uploadFD: Int32 = -1
    /// The jar the transfer was started with (a redirect it follows itself starts again with it).
    var cookieJar: CookieJar?
    /// When the transfer was first started (EventLoop.now()): the whole call's timeout counts
    /// from it, across the redirects it follows itself.
    var startedAt = 0.0
    /// For a transfer that followed redirects itself: the request as made (the response's
    /// request: the cache files the answer under it), the hops and the time they took.
    var redirected: (first: HTTPRequest, hops: Int, time: Double)?
    /// The loop's timer that bounds the whole call (Transfer+Deadline.swift).
    var deadlineTimer: EventLoop.TimerID?

    public init(request: consuming HTTPRequest, completion: @escaping Completion) {
        self.maxBody = request.options.maxBody
        self.completion = completion
        self.request = request   // moved in: the last use
    }

    deinit {
        if uploadFD >= 0 { close(uploadFD) }
        if let mime { lunet_curl_mime_free(mime) }
    }

    func markRunning() { state = .running }

    /// Runs the completion once, whatever path got here. A transfer whose events consumer has
    /// events still to go through completes after they are through (the request resolves after
    /// its last chunk's callback returned); `force` (a cancel) completes at once and drops them.
    func finish(_ result: Result<HTTPResponse, LunetError>, force: Bool = false) {
        guard state != .finished else { return }
        disarmDeadline()
        fileTarget?.close()
        if !force && onEvents != nil {
            deliverEvents()
            if consumerBusy {
                if deferredResult == nil { loop?.noteWaitingForConsumer(self) }
                deferredResult = result
                return
            }
        }
        complete(result)
    }

    private func complete(_ result: Result<HTTPResponse, LunetError>) {
        if deferredResult != nil { loop?.noteConsumerDone(self) }
        deferredResult = nil
        pendingChunks.removeAll()
        state = .finished
        // A finished transfer lets go of its callbacks: one that names its transfer (to cancel
        // it, say) would otherwise keep both alive, with the curl handle, for good.
        onEvents = nil
        let done = completion
        completion = nil
        done?(result)
    }

    /// Everything `configure` sets on a handle besides this transfer's own URL, header list and
    /// pointers, for a request without a body, a file, progress or chunks (nil for others). A
    /// handle left by a finished transfer of the same profile is in the very state this one
    /// needs: the loop reuses it without `curl_easy_reset` and setting all again (libcurl keeps
    /// options across transfers on a handle by design).
    /// A class, handed on by reference between the loop, a transfer and the loop's list of
    /// configured handles: as a struct of the method and the options it was copied (and each
    /// copy destroyed) field by field, five times a request. The loop makes one per run of
    /// requests alike (`EventLoop.profile(for:)`).
    final class Profile: Equatable {
        let method: String
        let options: TransferOptions
        init(method: String, options: TransferOptions) {
            self.method = method
            self.options = options
        }
        static func == (a: Profile, b: Profile) -> Bool { a === b || (a.method == b.method && a.options == b.options) }
        /// Whether a transfer of `request` has this profile.
        func describes(_ request: HTTPRequest) -> Bool { method == request.method && options == request.options }
    }

    /// Whether this transfer has a profile at all (see Profile).
    var hasProfile: Bool {
        guard case .none = request.body, fileTarget == nil, !wantsProgress, !streamChunks, !capturesSentHead else { return false }
        return true
    }

    /// Configures `handle` for this request. Returns an error naming a bad option instead of
    /// starting a transfer that cannot work. `reusing`: the handle was left by a finished
    /// transfer with this one's `profile`; only what is this transfer's own is set.
    /// `loop`: the loop starting it (its shared URL and header list), passed rather than read
    /// from the weak `self.loop` (an atomic load each time).
    func configure(_ handle: EasyHandle, reusing: Bool = false, on loop: EventLoop) -> LunetError? {
        let h = handle.raw
        self.handle = handle
        handle.transfer = Unmanaged.passUnretained(self)
        let hadURL = handle.url, hadList = handle.headerList
        let o = request.options
        var failed: CURLcode = CURLE_OK
        func check(_ c: CURLcode) { if c != CURLE_OK && failed == CURLE_OK { failed = c } }

        // Strings go to curl through withCString: passed straight to a `const char *` parameter,
        // a String is first copied into a new array (two allocations per call, every request).
        // The URL parsed once for a run of requests to it (ParsedURL.swift), with its text as
        // libcurl writes it (the effective URL); the text as given when libcurl does not parse
        // it, so that libcurl's error names the problem. CURLOPT_CURLU wins over CURLOPT_URL, so
        // a handle that had one is told it has none. A handle whose last transfer had this
        // parsed URL has both set already (EasyHandle).
        if let parsed = loop.parsedURL(request.url) {
            parsedURL = parsed
            if handle.url !== parsed {
                check(lunet_easy_setopt_str(h, CURLOPT_URL, parsed.normalized))
                check(lunet_easy_setopt_ptr(h, CURLOPT_CURLU, UnsafeMutableRawPointer(parsed.handle)))
                handle.url = parsed
            }
        } else {
            parsedURL = nil
            check(lunet_easy_setopt_ptr(h, CURLOPT_CURLU, nil))
            check(request.url.withCString { lunet_easy_setopt_str(h, CURLOPT_URL, $0) })
            handle.url = nil
        }
        if !handle.pointersSet {
            let data = handle.opaque
            check(lunet_easy_setopt_ptr(h, CURLOPT_ERRORBUFFER, handle.errorBuffer))
            check(lunet_easy_setopt_ptr(h, CURLOPT_PRIVATE, data))
            check(lunet_easy_setopt_ptr(h, CURLOPT_WRITEDATA, data))
            check(lunet_easy_setopt_ptr(h, CURLOPT_HEADERDATA, data))
            handle.pointersSet = true
        }
        let me = Unmanaged.passUnretained(self).toOpaque()   // the other callbacks' data
        configureHeaderList(handle, loop, check)
        if reusing {
            if hadURL != nil && hadURL === handle.url && hadList === handle.headerList { loop.handlesReusedAsTheyWere += 1 }
            return failed == CURLE_OK ? nil : refused(failed)
        }

        check(lunet_easy_setopt_long(h, CURLOPT_NOSIGNAL, 1))
        check(lunet_easy_setopt_write(h, CURLOPT_WRITEFUNCTION, transferWriteCallback))
        check(lunet_easy_setopt_write(h, CURLOPT_HEADERFUNCTION, transferHeaderCallback))
        // Only web protocols, also after redirects: a script must not be sent to file:// or smb://.
        check(lunet_easy_setopt_str(h, CURLOPT_PROTOCOLS_STR, "http,https"))
        check(lunet_easy_setopt_str(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))

        switch request.method {
        case "GET":
            check(lunet_easy_setopt_long(h, CURLOPT_HTTPGET, 1))
        case "HEAD":
            check(lunet_easy_setopt_long(h, CURLOPT_NOBODY, 1))
        case "POST":
            // POST (not a custom method) so that a 301/302/303 turns into a GET as browsers do.
            check(lunet_easy_setopt_long(h, CURLOPT_POST, 1))
        default:
            check(request.method.withCString { lunet_easy_setopt_str(h, CURLOPT_CUSTOMREQUEST, $0) })
        }
        if case .bytes(let b) = request.body {
            check(lunet_easy_setopt_off(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(b.count)))
            check(lunet_easy_setopt_ptr(h, CURLOPT_POSTFIELDS, b.count > 0 ? UnsafeMutableRawPointer(b.base) : emptyBody))
        } else if case .multipart(let parts) = request.body {
            if let problem = configureMultipart(h, parts) { return problem }
        } else if case .file(let path) = request.body {
            if let problem = configureUpload(h, path) { return problem }
        } else if request.method == "POST" {
            check(lunet_easy_setopt_off(h, CURLOPT_POSTFIELDSIZE_LARGE, 0))
            check(lunet_easy_setopt_ptr(h, CURLOPT_POSTFIELDS, emptyBody))
        }

        if decodesBody { check(lunet_easy_setopt_str(h, CURLOPT_ACCEPT_ENCODING, "")) }
        if wantsProgress {
            check(lunet_easy_setopt_long(h, CURLOPT_NOPROGRESS, 0))
            check(lunet_easy_setopt_xferinfo(h, CURLOPT_XFERINFOFUNCTION, transferProgressCallback))
            check(lunet_easy_setopt_ptr(h, CURLOPT_XFERINFODATA, me))
        }
        if capturesSentHead {
            check(lunet_easy_setopt_long(h, CURLOPT_VERBOSE, 1))
            check(lunet_easy_setopt_debug(h, CURLOPT_DEBUGFUNCTION, transferDebugCallback))
            check(lunet_easy_setopt_ptr(h, CURLOPT_DEBUGDATA, me))
        }
        if let target = fileTarget {
            if let problem = target.open() { return problem }
            // Big reads for a file: a tenth of the system calls of curl's 16 KB default.
            check(lunet_easy_setopt_long(h, CURLOPT_BUFFERSIZE, 512 * 1024))
        }
        // A request with credentials follows its redirects in lunet (Transfer+Redirects.swift).
        check(lunet_easy_setopt_long(h, CURLOPT_FOLLOWLOCATION, (o.followRedirects ?? true) && !o.followsRedirectsItself ? 1 : 0))
        check(lunet_easy_setopt_long(h, CURLOPT_MAXREDIRS, o.maxRedirects ?? 10))
        if let t = o.timeout, t > 0 { check(lunet_easy_setopt_long(h, CURLOPT_TIMEOUT_MS, Int(max(1, t * 1000)))) }
        if let t = o.connectTimeout, t > 0 { check(lunet_easy_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, t * 1000)))) }
        if o.insecure == true {
            check(lunet_easy_setopt_long(h, CURLOPT_SSL_VERIFYPEER, 0))
            check(lunet_easy_setopt_long(h, CURLOPT_SSL_VERIFYHOST, 0))
        }
        if let ca = o.caFile { check(lunet_easy_setopt_str(h, CURLOPT_CAINFO, ca)) }
        if let proxy = o.proxy {
            check(lunet_easy_setopt_str(h, CURLOPT_PROXY, proxy))
        } else if CurlGlobal.environmentNamesNoProxy {
            // What libcurl would find in the environment, said once (see environmentNamesNoProxy).
            check(lunet_easy_setopt_str(h, CURLOPT_PROXY, ""))
            check(lunet_easy_setopt_str(h, CURLOPT_NOPROXY, ""))
        }
        if let a = o.curlAuth {
            // CURLAUTH_DIGEST, _NEGOTIATE, _NTLM: macros Swift does not import (curl.h).
            let set: CURLcode
            switch a.scheme {
            case .digest: set = lunet_easy_setopt_long(h, CURLOPT_HTTPAUTH, 1 << 1)
            case .negotiate: set = lunet_easy_setopt_long(h, CURLOPT_HTTPAUTH, 1 << 2)
            case .ntlm: set = lunet_easy_setopt_long(h, CURLOPT_HTTPAUTH, 1 << 3)
            }
            // A libcurl built without the scheme (or older than SigV4, 7.75) refuses the option.
            if set == CURLE_NOT_BUILT_IN || set == CURLE_UNKNOWN_OPTION {
                return LunetError(.argument, "this libcurl (\(String(cString: lunet_curl_version()))) cannot do \(a.scheme.name) authentication", url: request.url)
            }
            check(set)
            check(a.user.withCString { lunet_easy_setopt_str(h, CURLOPT_USERNAME, $0) })
            check(a.password.withCString { lunet_easy_setopt_str(h, CURLOPT_PASSWORD, $0) })
        }
        if let cert = o.clientCertificate { check(lunet_easy_setopt_str(h, CURLOPT_SSLCERT, cert)) }
        if let key = o.clientKey { check(lunet_easy_setopt_str(h, CURLOPT_SSLKEY, key)) }
        if let pass = o.clientKeyPassword { check(lunet_easy_setopt_str(h, CURLOPT_KEYPASSWD, pass)) }
        if let netrc = o.netrcFile, !netrc.isEmpty {   // "": none, over a session that names one
            check(lunet_easy_setopt_long(h, CURLOPT_NETRC, Int(CURL_NETRC_OPTIONAL.rawValue)))
            check(lunet_easy_setopt_str(h, CURLOPT_NETRC_FILE, netrc))
        }
        if let v = o.httpVersion {
            let value: Int
            switch v {
            case .http1_0: value = CURL_HTTP_VERSION_1_0
            case .http1_1: value = CURL_HTTP_VERSION_1_1
            case .http2: value = CURL_HTTP_VERSION_2TLS
            case .http2PriorKnowledge: value = CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
            case .http3: value = 30  // CURL_HTTP_VERSION_3; libcurl says so when it lacks HTTP/3
            }
            check(lunet_easy_setopt_long(h, CURLOPT_HTTP_VERSION, value))
        }
        return failed == CURLE_OK ? nil : refused(failed)
    }

    private func refused(_ code: CURLcode) -> LunetError {
        LunetError(.argument, "a request option was refused: \(String(cString: lunet_curl_easy_strerror(code)))", url: request.url)
    }

    /// Whether curl decodes the body (CURLOPT_ACCEPT_ENCODING set): not for a file, which keeps
    /// the bytes as sent, nor when the request says `decompress = false`.
    private var decodesBody: Bool { (request.options.decompress ?? true) && fileTarget == nil }

    /// The request's header lines, as a list curl reads while the transfer runs (always set,
    /// so that a reused handle never keeps the list of the transfer before).
    private func configureHeaderList(_ handle: EasyHandle, _ loop: EventLoop, _ check: (CURLcode) -> Void) {
        let h = handle.raw
        // The Accept-Encoding line curl would make for CURLOPT_ACCEPT_ENCODING "", made here, first
        // in the list, so that it has the same place on the wire (right after Accept). curl
        // writes its own through its printf a byte at a time, twice (into a string, then into the
        // request): ~4k instructions of every request (concurrent benchmark, callgrind); a line
        // of the list goes once. Decoding still follows CURLOPT_ACCEPT_ENCODING. (lunet's SigV4
        // signature leaves Accept-Encoding out: AWSSigV4.swift.)
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
    private func configureMultipart(_ h: UnsafeMutableRawPointer, _ parts: [MultipartPart]) -> LunetError? {
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
                    return LunetError(.argument, "multipart part '\(part.name)': cannot read the file '\(path)'", url: request.url)
                }
                if lunet_curl_mime_filedata(p, path) != CURLE_OK {
                    return LunetError(.argument, "multipart part '\(part.name)': cannot read the file '\(path)'", url: request.url)
                }
            }
            if let filename = part.filename { lunet_curl_mime_filename(p, filename) }
            if let type = part.contentType { lunet_curl_mime_type(p, type) }
        }
        _ = lunet_easy_setopt_ptr(h, CURLOPT_MIMEPOST, UnsafeMutableRawPointer(m))
        return nil
    }

    /// An upload: curl reads the file through the read callback, in chunks.
    private func configureUpload(_ h: UnsafeMutableRawPointer, _ path: String) -> LunetError? {
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

    func readUpload(_ buffer: UnsafeMutablePointer<CChar>, _ n: Int) -> Int {
        while true {
            let r = read(uploadFD, buffer, n)
            if r >= 0 { return r }
            if errno == EINTR { continue }
            abortReason = LunetError(.io, "reading the file to upload failed: \(String(cString: strerror(errno)))", url: request.url)
            return Int(CURL_READFUNC_ABORT)
        }
    }

    func reportProgress(_ dltotal: Int64, _ dlnow: Int64, _ ultotal: Int64, _ ulnow: Int64) {
        let now = (download: dlnow, downloadTotal: dltotal, upload: ulnow, uploadTotal: ultotal)
        if now != progress {
            progress = now
            markEventful()
        }
    }

    func markEventful() {
        guard !eventful, onEvents != nil else { return }
        eventful = true
        if !consumerBusy { loop?.noteEventful(self) }
    }

    /// Hands waiting progress and chunks to `onEvents` (on the loop, outside curl's callbacks),
    /// unless the consumer is still busy with the batch before.
    func deliverEvents() {
        guard eventful, !consumerBusy, let onEvents else { return }
        eventful = false
        consumerBusy = true
        let chunks = pendingChunks
        pendingChunks = []
        pendingChunkBytes = 0
        onEvents(self, chunks)
    }

    /// The consumer is through with the batch it was handed: let the body flow again, hand over
    /// what arrived meanwhile, or, once the transfer has ended and nothing is left, complete.
    /// Runs on the loop thread, outside curl's callbacks.
    public func consumerFinished() {
        guard consumerBusy else { return }
        consumerBusy = false
        bufferedChunkBytes = pendingChunkBytes
        if pausedForConsumer, let h = easy {
            pausedForConsumer = false
            // May call the write callback at once with the data curl held back.
            _ = lunet_curl_easy_pause(h, 0 /* CURLPAUSE_CONT */)
        }
        if deferredResult != nil {
            // On a later turn: the consumer's own code is still on the stack.
            loop?.addTimer(after: 0) { [self] in
                guard let result = deferredResult, !consumerBusy else { return }
                if eventful {
                    deliverEvents()
                    if consumerBusy { return }
                }
                complete(result)
            }
        } else if eventful {
            loop?.noteEventful(self)
        }
    }

    // MARK: what curl calls while the transfer runs (on the loop thread, inside curl_multi_perform)

    func receiveBody(_ data: UnsafeRawPointer, _ n: Int) -> Int {
        let success = (200..<300).contains(currentStatus)
        if streamChunks && success && bufferedChunkBytes >= chunkBufferLimit {
            // The consumer is behind: curl keeps this data and hands it over again after
            // lunet_curl_easy_pause(CONT) (consumerFinished). Nothing of it is written or queued now.
            pausedForConsumer = true
            return Int(CURL_WRITEFUNC_PAUSE)
        }
        if let target = fileTarget, success {
            if !target.hasBegun, let problem = target.begin(status: currentStatus, headers: headers) {
                abortReason = problem
                return 0
            }
            if let problem = target.write(data, n) {
                abortReason = problem
                return 0
            }
            if streamChunks { queueChunk(data, n) }
            return n
        }
        if streamChunks && success {
            queueChunk(data, n)
            return n
        }
        if let maxBody, body.count + n > maxBody {
            abortReason = LunetError(.tooLarge, "the body is larger than max_body (\(maxBody) bytes)", url: request.url)
            return 0  // any other count than n makes curl stop with CURLE_WRITE_ERROR
        }
        body.append(data, n)
        return n
    }

    private func queueChunk(_ data: UnsafeRawPointer, _ n: Int) {
        pendingChunks.append(ByteBuffer(copying: data, count: n))
        pendingChunkBytes += n
        bufferedChunkBytes += n
        markEventful()
    }

    /// One header line from curl (curl hands them over whole). A status line starts a new
    /// response; other lines are kept as bytes (see `headerLines`).
    func receiveHeaderLine(_ data: UnsafeRawPointer, _ n: Int) -> Int {
        let b = UnsafeBufferPointer(start: data.assumingMemoryBound(to: UInt8.self), count: n)
        var end = n
        while end > 0 && (b[end - 1] == 13 || b[end - 1] == 10) { end -= 1 }
        if end >= 5 && b[0] == 0x48 && b[1] == 0x54 && b[2] == 0x54 && b[3] == 0x50 && b[4] == 0x2F {   // "HTTP/"
            // A new response starts (after a redirect, a 100 Continue, or a proxy's CONNECT).
            headerBlockEnded = false
            trailerLines?.removeAll()
            if decodingSuspended, let h = easy {
                // A new response (after a redirect): its codings are judged afresh.
                _ = lunet_easy_setopt_long(h, CURLOPT_HTTP_CONTENT_DECODING, 1)
                decodingSuspended = false
            }
            headerLines.removeAll()
            body.removeAll()
            // "HTTP/1.1 200 OK": the digits after the first space
            var i = 5
            while i < end && b[i] != 0x20 { i += 1 }
            var code = 0
            i += 1
            // At most three digits count: a longer number (a hostile server) must not overflow.
            var digits = 0
            while i < end, b[i] >= 0x30 && b[i] <= 0x39 {
                if digits < 3 { code = code * 10 + Int(b[i] - 0x30) }
                digits += 1
                i += 1
            }
            if digits != 3 { code = 0 }
            currentStatus = code
            reasonText = reasonPhrase(b, from: i, to: end, status: code)
            return n
        }
        if end == 0 {
            headerBlockEnded = true
            return n
        }
        // A line without a colon is not a field (memchr: the slice's own search went a byte at a time).
        guard memchr(data, 0x3A, end) != nil else { return n }
        if headerBlockEnded {
            // libcurl hands trailer fields to the header callback too: they are not header fields.
            let trailers = trailerLines ?? ByteBuffer()
            trailerLines = trailers
            trailers.appendLine(data, end)
            return n
        }
        headerLines.appendLine(data, end)
        let first = b[0] | 0x20
        if first == 0x63 || first == 0x74 { passUnknownCodings(UnsafeBufferPointer(rebasing: b[0..<end])) }   // c, t
        return n
    }

    /// A `Content-Encoding` or `Transfer-Encoding` naming a coding libcurl cannot remove
    /// (`x-custom`) would fail the transfer when the body arrives. Such a body is handed through
    /// as received instead, every coding left on and the field intact (RFC 9110 §8.4: the
    /// codings are the sender's statement of what was applied; the client may know what to do),
    /// by turning libcurl's decoding off for this response. libcurl reads that option as each
    /// piece of the body is written (7.88), after the header line was handed here. A mixed list
    /// (`x-custom, gzip`) is handed through whole: libcurl cannot take off only some codings.
    private func passUnknownCodings(_ line: UnsafeBufferPointer<UInt8>) {
        // Most lines are not these two: a colon after 16 or 17 bytes ("content-encoding",
        // "transfer-encoding") rules them out, looked at in place (no search, no String). A name
        // of that length that is one of the two has no colon before it.
        let colon = line.count > 16 && line[16] == 0x3A ? 16 : line.count > 17 && line[17] == 0x3A ? 17 : 0
        guard colon != 0, !decodingSuspended, let h = easy else { return }
        let name = String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self).lowercased()
        // (Without decompress libcurl decodes no content coding, and turning it off changes nothing.)
        guard name == "transfer-encoding" || name == "content-encoding" else { return }
        let value = String(decoding: UnsafeBufferPointer(rebasing: line[(colon + 1)...]), as: UTF8.self)
        guard ContentCodings.namesUnknown(value, known: ContentCodings.removable) else { return }
        _ = lunet_easy_setopt_long(h, CURLOPT_HTTP_CONTENT_DECODING, 0)
        decodingSuspended = true
        handleProfile = nil      // the handle is reset after this transfer, not reused as it is
    }

    // MARK: the end

    func response(from h: UnsafeMutableRawPointer) -> HTTPResponse {
        var code = 0
        _ = lunet_easy_getinfo_long(h, CURLINFO_RESPONSE_CODE, &code)
        var urlPointer: UnsafeMutablePointer<CChar>? = nil
        _ = lunet_easy_getinfo_str(h, CURLINFO_EFFECTIVE_URL, &urlPointer)
        var version = 0
        _ = lunet_easy_getinfo_long(h, CURLINFO_HTTP_VERSION, &version)
        var connects = 0
        _ = lunet_easy_getinfo_long(h, CURLINFO_NUM_CONNECTS, &connects)
        var redirects = 0
        _ = lunet_easy_getinfo_long(h, CURLINFO_REDIRECT_COUNT, &redirects)

        func seconds(_ info: CURLINFO) -> Double {
            var v: curl_off_t = 0
            _ = lunet_easy_getinfo_off(h, info, &v)
            return Double(v) / 1_000_000
        }
        var t = HTTPResponse.Timings()
        t.dns = seconds(CURLINFO_NAMELOOKUP_TIME_T)
        t.connect = seconds(CURLINFO_CONNECT_TIME_T)
        t.tls = seconds(CURLINFO_APPCONNECT_TIME_T)
        t.ttfb = seconds(CURLINFO_STARTTRANSFER_TIME_T)
        t.total = seconds(CURLINFO_TOTAL_TIME_T) + (redirected?.time ?? 0)

        let versionName: String
        switch version {
        case CURL_HTTP_VERSION_1_0: versionName = "1.0"
        case CURL_HTTP_VERSION_1_1: versionName = "1.1"
        case CURL_HTTP_VERSION_2_0: versionName = "2"
        case 30: versionName = "3"
        default: versionName = ""
        }
        let response = HTTPResponse(status: code, reason: reasonText ?? HTTPResponse.standardReason(code), headerLines: headerLines, body: body,
                                    url: effectiveURL(urlPointer), httpVersion: versionName,
                                    timings: t, request: redirected?.first ?? request, connectionsOpened: connects,
                                    redirects: redirects + (redirected?.hops ?? 0))
        if let target = fileTarget, target.hasBegun {
            response.download = (written: target.written, restarted: target.restarted, size: target.offset)
        }
        if capturesSentHead { response.sentHead = sentHead.string }
        if let trailers = trailerLines, trailers.count > 0 { response.trailers = HTTPHeaders(parsingLines: trailers.bytes) }
        return response
    }

    /// The URL curl reports; the parsed URL's text, with no new string, when it is that one
    /// (no redirect).
    private func effectiveURL(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
        guard let pointer else { return request.url }
        if let parsed = parsedURL, strcmp(pointer, parsed.normalized) == 0 { return parsed.normalizedText }
        return String(cString: pointer)
    }

    /// "HTTP/1.1 404 Not Found": the phrase is what follows the next space after the status
    /// code (`from`: just after its digits), read as bytes: no String of the whole line, no
    /// search of it by index. The usual phrase for the status is a literal: no new string for
    /// most responses. nil when the line has no phrase.
    private func reasonPhrase(_ line: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, status: Int) -> String? {
        var space = start
        while space < end && line[space] != 0x20 { space += 1 }
        guard space + 1 < end else { return nil }
        let phrase = UnsafeBufferPointer(rebasing: line[(space + 1)..<end])
        let standard = HTTPResponse.standardReason(status)
        // The literal's bytes compared in place (memcmp; the generic elementsEqual went a byte
        // at a time through the String's view: ~170 instructions of every response).
        let same = standard.utf8.withContiguousStorageIfAvailable { s in
            s.count == phrase.count && (s.count == 0 || memcmp(s.baseAddress!, phrase.baseAddress!, s.count) == 0)
        }
        if same == true { return standard }
        return String(decoding: phrase, as: UTF8.self)
    }

    /// Why a transfer that libcurl finished without an error did not succeed after all, if it did not.
    var incompleteReply: LunetError? {
        // A HEAD's or a 1xx-only exchange's head still ends in a blank line; a cut does not.
        if !headerBlockEnded {
            var e = LunetError(.protocol, currentStatus == 0 ? "the server closed the connection before a complete status line"
                                                             : "the response ended inside its header block (the connection closed before the blank line that ends it)",
                               url: request.url)
            e.connectionLost = true
            return e
        }
        return nil
    }

    func error(for code: CURLcode) -> LunetError {
        if let abortReason { return abortReason }
        // libcurl's message for this transfer, in its handle's buffer (read before the handle
        // is released to the next transfer).
        let message = handle.flatMap { $0.errorBuffer[0] != 0 ? String(cString: $0.errorBuffer) : nil }
        if code == CURLE_UNSUPPORTED_PROTOCOL {
            // The same code for three different faults: the caller's URL, a redirect lunet will
            // not follow, and a reply that is not HTTP (HTTP/0.9). Tell them apart by what happened.
            let scheme = request.url.prefix(while: { $0 != ":" }).lowercased()
            if scheme != "http" && scheme != "https" {
                return LunetError(.argument, "only http and https URLs are requested, not \(scheme):", url: request.url)
            }
            if (300..<400).contains(currentStatus) {
                let target = headers["Location"] ?? "another scheme"
                return LunetError(.redirects, "refused to follow a redirect to \(target): only http and https are followed", url: request.url)
            }
            let detail = message ?? String(cString: lunet_curl_easy_strerror(code))
            return LunetError(.protocol, "the reply is not HTTP/1.x or HTTP/2: \(detail)", url: request.url)
        }
        // libcurl 7.88 refuses a header line over 100 KB with "out of memory" and no detail.
        if code == CURLE_OUT_OF_MEMORY && message == nil {
            return LunetError(.protocol, "a response header line is larger than libcurl accepts (100 KB)", url: request.url)
        }
        let detail = message ?? String(cString: lunet_curl_easy_strerror(code))
        var e = LunetError(CurlErrorMapping.kind(of: code), detail, url: request.url)
        e.connectionLost = CurlErrorMapping.losesTheConnection(code)
        return e
    }
}

/// A stable address for an empty body (curl keeps the pointer it is given).
nonisolated(unsafe) private let emptyBody: UnsafeMutableRawPointer = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)

// curl's callbacks: C function pointers that find their transfer through the user pointer: the
// EasyHandle for the two called for every header line and body piece (set once per handle),
// the Transfer for the others. The transfer is alive while curl calls them (the loop's
// `running` table holds it until it is released from curl): the two use it without a retain and
// a release around each call (_withUnsafeGuaranteedRef).
private let transferWriteCallback: curl_write_callback = { data, size, count, user in
    Unmanaged<EasyHandle>.fromOpaque(user!)._withUnsafeGuaranteedRef {
        $0.transfer.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.receiveBody(data!, size * count) }
    }
}

private let transferReadCallback: curl_read_callback = { buffer, size, count, user in
    let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
    return transfer.readUpload(buffer!, size * count)
}

private let transferProgressCallback: curl_xferinfo_callback = { user, dltotal, dlnow, ultotal, ulnow in
    let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
    transfer.reportProgress(Int64(dltotal), Int64(dlnow), Int64(ultotal), Int64(ulnow))
    return 0
}

/// Only the request heads (CURLINFO_HEADER_OUT) are kept; verbose text and data are ignored.
private let transferDebugCallback: curl_debug_callback = { _, type, data, size, user in
    guard Int32(type.rawValue) == lunet_info_header_out(), let data, let user else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
    transfer.sentHead.removeAll()   // a redirect's request replaces the one before
    transfer.sentHead.append(data, size)
    return 0
}

private let transferHeaderCallback: curl_write_callback = { data, size, count, user in
    Unmanaged<EasyHandle>.fromOpaque(user!)._withUnsafeGuaranteedRef {
        $0.transfer.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.receiveHeaderLine(data!, size * count) }
    }
}
