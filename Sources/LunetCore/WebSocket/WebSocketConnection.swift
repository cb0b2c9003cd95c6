import CLunetCurl
import CLunetLinux
import Glibc

/// A WebSocket client connection (RFC 6455) on the loop. libcurl makes the connection
/// (CURLOPT_CONNECT_ONLY: TCP, TLS, proxies, the session's TLS settings); lunet speaks the
/// handshake and the framing over it with curl_easy_send/curl_easy_recv, watching the socket
/// in the loop's poll. Debian's libcurl 7.88 has no WebSocket support of its own.
///
/// Everything runs on the loop thread. Events go to `onEvent`, in order; after `.closed` or
/// `.failed` nothing more comes and the connection is gone.
public final class WebSocketConnection {
    public enum Event {
        case open(subprotocol: String?)
        case message(WebSocketMessageAssembler.Event)
        /// The closing handshake finished (or the server closed first): its code and reason.
        case closed(code: UInt16?, reason: String)
        /// The connection failed: a protocol violation (after a close frame with its code was
        /// sent), the connection dropped, or it could not be made.
        case failed(LunetError, closeCode: UInt16?)
    }

    public enum State { case connecting, handshake, open, closing, closed }

    public var onEvent: ((Event) -> Void)?
    public private(set) var state: State = .connecting
    public let url: String
    private let loop: EventLoop
    private let handshake: WebSocketHandshake
    private let requestHead: String
    private var handle: UnsafeMutableRawPointer?
    private var fd: Int32 = -1
    private var outbox: [UInt8] = []
    private var headBuffer: [UInt8] = []
    private var decoder: WebSocketFrameDecoder
    private var assembler: WebSocketMessageAssembler
    private var closeTimer: EventLoop.TimerID?
    /// Bounds the opening: connecting, TLS and the server's answer to the upgrade request.
    private var openingTimer: EventLoop.TimerID?
    /// The opening's bound when the connection names none (`timeout`, else `connect_timeout`):
    /// a server that accepts and never answers must not hold a script for ever.
    public static let defaultOpeningTimeout = 30.0
    /// Reading stops while the consumer is behind (`pauseReading`): TCP then holds the server back.
    private var readingPaused = false

    /// `url`: ws:// or wss:// (http:// and https:// are taken as the same). `headers`: extra
    /// request fields (the session's, auth). `options`: connect timeout, TLS, proxy.
    public init(loop: EventLoop, url: String, headers: HTTPHeaders = HTTPHeaders(), protocols: [String] = [],
                options: TransferOptions = TransferOptions(), maxMessage: Int = 16 << 20, nonce: [UInt8]? = nil) throws(LunetError) {
        self.loop = loop
        self.url = url
        guard let parts = Self.split(url) else {
            throw LunetError(.argument, "not a ws:// or wss:// URL: \(url)", url: url)
        }
        // Subprotocols go into a header field: each must be a token (RFC 6455 §4.1), never
        // bytes that end the field.
        for p in protocols where !HeaderFieldRules.isToken(p) {
            throw LunetError(.argument, "websocket protocol \(HeaderFieldRules.quoted(p)) is not a token (letters, digits and !#$%&'*+-.^_`|~ only): refused, nothing was sent", url: url)
        }
        if let problem = HeaderFieldRules.problem(in: headers, url: url) { throw problem }
        var key = nonce ?? []
        if key.isEmpty {
            key = [UInt8](repeating: 0, count: 16)
            _ = key.withUnsafeMutableBytes { lunet_random_bytes($0.baseAddress, 16) }
        }
        handshake = WebSocketHandshake(nonce: key, protocols: protocols)
        var extra: [(String, String)] = []
        for (name, value) in headers where !Self.reserved.contains(name.lowercased()) { extra.append((name, value)) }
        requestHead = handshake.request(target: parts.target, host: parts.host, extra: extra)
        decoder = WebSocketFrameDecoder(maxPayload: maxMessage)
        assembler = WebSocketMessageAssembler(maxMessage: maxMessage)
        self.curlURL = parts.curlURL
        self.options = options
    }

    private let curlURL: String
    private let options: TransferOptions
    /// Fields the handshake sets itself.
    private static let reserved: Set<String> = ["host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version",
                                                "sec-websocket-protocol", "sec-websocket-extensions", "content-length"]

    /// ws://host:port/path?q -> (http://host:port/, "host:port", "/path?q").
    static func split(_ url: String) -> (curlURL: String, host: String, target: String)? {
        let lower = url.lowercased()
        let schemes = [("ws://", "http://"), ("wss://", "https://"), ("http://", "http://"), ("https://", "https://")]
        guard let (scheme, curlScheme) = schemes.first(where: { lower.hasPrefix($0.0) }) else { return nil }
        let rest = url.dropFirst(scheme.count)
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        if let at = authority.lastIndex(of: "@") { authority = String(authority[authority.index(after: at)...]) }
        guard !authority.isEmpty else { return nil }
        var target = String(rest[authorityEnd...])
        if let hash = target.firstIndex(of: "#") { target = String(target[..<hash]) }
        if target.isEmpty || target.first == "?" { target = "/" + target }
        return (curlScheme + authority + "/", authority, target)
    }

    /// Starts connecting; events follow on later turns.
    public func start() {
        guard state == .connecting, handle == nil else { return }
        let h: UnsafeMutableRawPointer
        switch loop.newHandle() {
        case .success(let made): h = made
        case .failure(let e):
            loop.addTimer(after: 0) { [self] in fail(e, closeCode: nil, sendClose: false) }
            return
        }
        handle = h
        loop.holds += 1
        _ = curlURL.withCString { lunet_easy_setopt_str(h, CURLOPT_URL, $0) }
        _ = lunet_easy_setopt_long(h, CURLOPT_CONNECT_ONLY, 1)
        _ = lunet_easy_setopt_long(h, CURLOPT_NOSIGNAL, 1)
        _ = lunet_easy_setopt_str(h, CURLOPT_PROTOCOLS_STR, "http,https")
        if let t = options.connectTimeout, t > 0 { _ = lunet_easy_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, t * 1000))) }
        if options.insecure == true {
            _ = lunet_easy_setopt_long(h, CURLOPT_SSL_VERIFYPEER, 0)
            _ = lunet_easy_setopt_long(h, CURLOPT_SSL_VERIFYHOST, 0)
        }
        if let ca = options.caFile { _ = lunet_easy_setopt_str(h, CURLOPT_CAINFO, ca) }
        if let proxy = options.proxy {
            _ = lunet_easy_setopt_str(h, CURLOPT_PROXY, proxy)
            _ = lunet_easy_setopt_long(h, CURLOPT_HTTPPROXYTUNNEL, 1)   // CONNECT through an HTTP proxy
        }
        // The upgrade is HTTP/1.1 by definition (RFC 8441's HTTP/2 form is not used).
        _ = lunet_easy_setopt_long(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        // libcurl bounds the connect (CURLOPT_CONNECTTIMEOUT_MS); nothing bounds the upgrade's
        // answer but this: the whole opening, as `timeout` (or, without one, `connect_timeout`).
        let limit = [options.timeout, options.connectTimeout].compactMap { $0 }.first { $0 > 0 } ?? Self.defaultOpeningTimeout
        openingTimer = loop.addTimer(after: limit) { [weak self] in
            guard let self, self.state == .connecting || self.state == .handshake else { return }
            self.openingTimer = nil
            let stage = self.state == .connecting ? "connecting" : "the server has not answered the upgrade request"
            self.fail(LunetError(.timeout, "the WebSocket opening handshake did not complete within \(limit) s (\(stage))", url: self.url),
                      closeCode: nil, sendClose: false)
        }
        loop.connect(h) { [self] code in connected(code) }
    }

    private func connected(_ code: CURLcode) {
        guard state == .connecting, let h = handle else { return }
        guard code == CURLE_OK else {
            let detail = String(cString: lunet_curl_easy_strerror(code))
            return fail(LunetError(CurlErrorMapping.kind(of: code), "cannot connect: \(detail)", url: url), closeCode: nil, sendClose: false)
        }
        var socket: Int32 = -1
        _ = lunet_easy_getinfo_socket(h, CURLINFO_ACTIVESOCKET, &socket)
        guard socket >= 0 else { return fail(LunetError(.connect, "libcurl gave no socket for the connection", url: url), closeCode: nil, sendClose: false) }
        fd = socket
        state = .handshake
        loop.watch(fd) { [unowned self] in readable() }
        queue(Array(requestHead.utf8))
    }

    // MARK: sending

    public func sendText(_ text: String) { sendFrame(.text, Array(text.utf8)) }
    public func sendBinary(_ bytes: [UInt8]) { sendFrame(.binary, bytes) }
    public func ping(_ payload: [UInt8]) { sendFrame(.ping, Array(payload.prefix(125))) }

    /// Starts the closing handshake: a close frame now; the connection ends when the server's
    /// answers (or after `timeout` seconds without one).
    public func close(code: UInt16 = 1000, reason: String = "", timeout: Double = 5) {
        switch state {
        case .open:
            sendFrame(.close, WebSocketMessageAssembler.closePayload(code: code, reason: reason))
            state = .closing
            closeTimer = loop.addTimer(after: timeout) { [self] in
                finish(.failed(LunetError(.timeout, "the server did not answer the close frame within \(timeout) s", url: url), closeCode: 1006))
            }
        case .connecting, .handshake:
            finish(.closed(code: nil, reason: "closed before it was open"))
        case .closing, .closed:
            break
        }
    }

    /// A close frame went out: nothing may follow it (§5.5.1), not even a second close frame.
    private var sentClose = false

    private func sendFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        guard !sentClose, state == .open || (state == .closing && opcode == .close) else { return }
        if opcode == .close { sentClose = true }
        var mask = [UInt8](repeating: 0, count: 4)
        _ = mask.withUnsafeMutableBytes { lunet_random_bytes($0.baseAddress, 4) }
        queue(WebSocketFrame(opcode: opcode, payload: payload).encoded(mask: mask))
    }

    private func queue(_ bytes: [UInt8]) {
        outbox += bytes
        flush()
    }

    private func flush() {
        guard let h = handle, !outbox.isEmpty else { return }
        var done = 0
        while done < outbox.count {
            var sent = 0
            let code = outbox.withUnsafeBytes { lunet_curl_easy_send(h, $0.baseAddress! + done, outbox.count - done, &sent) }
            if code == CURLE_AGAIN { break }
            guard code == CURLE_OK else {
                outbox.removeAll()
                return fail(LunetError(.connect, "the connection failed while sending: \(String(cString: lunet_curl_easy_strerror(code)))", url: url),
                            closeCode: 1006, sendClose: false)
            }
            done += sent
        }
        outbox.removeFirst(done)
        if !outbox.isEmpty { loop.whenWritable(fd) { [weak self] in self?.flush() } }
    }

    // MARK: receiving

    /// Stops reading from the socket until `resumeReading` (the consumer is behind).
    public func pauseReading() {
        guard !readingPaused, fd >= 0, state == .open || state == .closing else { return }
        readingPaused = true
        loop.unwatch(fd)
        if !outbox.isEmpty { loop.whenWritable(fd) { [weak self] in self?.flush() } }
    }

    public func resumeReading() {
        guard readingPaused, fd >= 0 else { return }
        readingPaused = false
        loop.watch(fd) { [unowned self] in readable() }
        // Frames already decoded wait in the decoder, and libcurl may hold decrypted bytes
        // that poll cannot see: go through both now.
        loop.addTimer(after: 0) { [weak self] in
            guard let self, self.handle != nil, !self.readingPaused else { return }
            self.drainFrames()
            self.readable()
        }
    }

    /// Where curl_easy_recv reads to: one buffer for the connection's life, not one per event.
    private var readBuffer = [UInt8](repeating: 0, count: 65536)

    private func readable() {
        guard let h = handle, !readingPaused else { return }
        while handle != nil && !readingPaused {
            var got = 0
            let code = readBuffer.withUnsafeMutableBytes { lunet_curl_easy_recv(h, $0.baseAddress, $0.count, &got) }
            if code == CURLE_AGAIN { return }
            guard code == CURLE_OK else {
                return fail(LunetError(.connect, "the connection failed: \(String(cString: lunet_curl_easy_strerror(code)))", url: url), closeCode: 1006, sendClose: false)
            }
            if got == 0 {
                // The server closed the TCP connection.
                if state == .closing && assembler.receivedClose { return finish(.closed(code: closeCode, reason: closeReason)) }
                return fail(LunetError(.connect, state == .handshake ? "the server closed the connection during the handshake"
                                                                     : "the connection closed without a closing handshake (1006)", url: url),
                            closeCode: 1006, sendClose: false)
            }
            readBuffer.withUnsafeBytes { received(UnsafeRawBufferPointer(rebasing: $0[0..<got])) }
        }
    }

    private var closeCode: UInt16?
    private var closeReason = ""

    private func received(_ bytes: UnsafeRawBufferPointer) {
        if state == .handshake {
            headBuffer.append(contentsOf: bytes)
            guard let end = Self.headEnd(headBuffer) else {
                if headBuffer.count > 64 << 10 { fail(LunetError(.protocol, "the handshake answer is larger than 64 KB", url: url), closeCode: nil, sendClose: false) }
                return
            }
            let head = Array(headBuffer[..<end])
            let rest = Array(headBuffer[end...])
            headBuffer = []
            guard let (status, fields) = Self.parseHead(head) else {
                return fail(LunetError(.protocol, "the server's handshake answer is not HTTP", url: url), closeCode: nil, sendClose: false)
            }
            switch handshake.check(status: status, headers: fields) {
            case .failure(let e):
                return fail(LunetError(.protocol, "the WebSocket handshake failed: \(e)", url: url), closeCode: nil, sendClose: false)
            case .success(let chosen):
                state = .open
                if let t = openingTimer { loop.cancelTimer(t); openingTimer = nil }
                onEvent?(.open(subprotocol: chosen))
                guard handle != nil else { return }
                decoder.append(rest)
            }
        } else {
            decoder.append(bytes)
        }
        drainFrames()
    }

    private func drainFrames() {
        while handle != nil && !readingPaused {
            switch decoder.next() {
            case .success(nil):
                // The server's close frame, and nothing after it in what arrived: done.
                if assembler.receivedClose { finish(.closed(code: closeCode, reason: closeReason)) }
                return
            case .failure(let e): return fail(LunetError(.protocol, e.message, url: url), closeCode: e.closeCode, sendClose: true)
            case .success(let frame?):
                switch assembler.receive(frame) {
                case .failure(let e): return fail(LunetError(.protocol, e.message, url: url), closeCode: e.closeCode, sendClose: true)
                case .success(nil): continue
                case .success(let event?): handle(event)
                }
            }
        }
    }

    private func handle(_ event: WebSocketMessageAssembler.Event) {
        switch event {
        case .ping(let payload):
            sendFrame(.pong, payload)   // automatic, as §5.5.2 requires
            onEvent?(.message(event))
        case .close(let code, let reason):
            closeCode = code
            closeReason = reason
            if state == .open {
                // The server closed first: answer with its code (§5.5.1), then end.
                sendFrame(.close, code.map { WebSocketMessageAssembler.closePayload(code: $0, reason: "") } ?? [])
                state = .closing
            }
            // The server closes the TCP connection after its close frame (§7.1.1); when ours was
            // first, its close frame is the answer. drainFrames finishes once it has checked that
            // no frame follows the close frame in what arrived (one would be a violation).
        default:
            if state == .open || state == .closing { onEvent?(.message(event)) }
        }
    }

    /// Ends the connection now, without waiting for the server's answer (a host that closes):
    /// a close frame with `code` goes out if it can, and no event is reported.
    public func terminate(code: UInt16, reason: String) {
        onEvent = nil
        if state == .open { sendFrame(.close, WebSocketMessageAssembler.closePayload(code: code, reason: reason)) }
        finish(.closed(code: code, reason: reason))
    }

    private func fail(_ error: LunetError, closeCode: UInt16?, sendClose: Bool) {
        // After the server's close frame ours has gone (or is going): no second close frame.
        if sendClose, let code = closeCode, !sentClose, state == .open || state == .closing {
            // Tell the server why (best effort: the bytes go now or never).
            if state == .open { state = .closing }
            sendFrame(.close, WebSocketMessageAssembler.closePayload(code: code, reason: String(error.message.prefix(100))))
        }
        finish(.failed(error, closeCode: closeCode))
    }

    /// Ends the connection once: frees the handle, stops watching, and reports `event`.
    private func finish(_ event: Event) {
        guard state != .closed else { return }
        state = .closed
        if let t = closeTimer { loop.cancelTimer(t); closeTimer = nil }
        if let t = openingTimer { loop.cancelTimer(t); openingTimer = nil }
        if fd >= 0 { loop.unwatch(fd); fd = -1 }
        if let h = handle {
            flushLast(h)
            loop.disconnect(h)
            handle = nil
            loop.holds -= 1
        }
        let report = onEvent
        onEvent = nil
        report?(event)
    }

    /// Sends what is queued without waiting (a close frame before the connection goes).
    private func flushLast(_ h: UnsafeMutableRawPointer) {
        var done = 0
        while done < outbox.count {
            var sent = 0
            let code = outbox.withUnsafeBytes { lunet_curl_easy_send(h, $0.baseAddress! + done, outbox.count - done, &sent) }
            if code != CURLE_OK { break }
            done += sent
        }
        outbox.removeAll()
    }

    /// Where the head ends (after its blank line), or nil.
    static func headEnd(_ b: [UInt8]) -> Int? {
        guard b.count >= 4 else { return nil }
        for i in 3..<b.count where b[i] == 10 && b[i - 1] == 13 && b[i - 2] == 10 && b[i - 3] == 13 { return i + 1 }
        return nil
    }

    /// "HTTP/1.1 101 Switching Protocols" and its fields.
    static func parseHead(_ head: [UInt8]) -> (Int, HTTPHeaders)? {
        var lines: [String] = []
        var start = 0
        for i in head.indices where head[i] == 10 {
            let end = i > start && head[i - 1] == 13 ? i - 1 : i
            lines.append(String(decoding: head[start..<end], as: UTF8.self))
            start = i + 1
        }
        guard !lines.isEmpty else { return nil }
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]), statusLine[1].count == 3 else { return nil }
        var fields = HTTPHeaders()
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields.add(String(line[..<colon]), String(line[line.index(after: colon)...]).trimmed)
        }
        return (status, fields)
    }

    deinit {
        if let h = handle {
            loop.disconnect(h)
            loop.holds -= 1
        }
    }
}
