import CLunetCurl
import Glibc

/// What libcurl hands a transfer while it runs (on the loop thread, inside
/// curl_multi_perform): the body's pieces, the header lines, an upload's reads.
extension Transfer {
    func readUpload(_ buffer: UnsafeMutablePointer<CChar>, _ n: Int) -> Int {
        if case .stream = request.body { return readStream(buffer, n) }
        while true {
            let r = read(uploadFD, buffer, n)
            if r >= 0 { return r }
            if errno == EINTR { continue }
            abortReason = LunetError(.io, "reading the file to upload failed: \(String(cString: strerror(errno)))", url: currentURL)
            return Int(CURL_READFUNC_ABORT)
        }
    }

    func receiveBody(_ data: UnsafeRawPointer, _ n: Int) -> Int {
        let success = (200..<300).contains(currentStatus)
        if streamChunks && success && flow.chunkArrives() == .pause {
            // The consumer is behind: curl keeps this data and hands it over again after
            // lunet_curl_easy_pause(CONT) (consumerFinished). Nothing of it is written or queued now.
            return Int(CURL_WRITEFUNC_PAUSE)
        }
        if !codingsJudged { judgeCodings() }
        guard let decoder else {
            if let problem = store(data, n, success) {
                abortReason = problem
                return 0   // any other count than n makes curl stop with CURLE_WRITE_ERROR
            }
            return n
        }
        var problem: LunetError?
        switch decoder.decode(data, n, { piece, count in
            problem = store(piece, count, success)
            return problem == nil
        }) {
        case .decoded: return n
        case .stopped: abortReason = problem
        case .corrupt(let coding):
            abortReason = LunetError(.protocol, "the body is not in the \(coding) coding its Content-Encoding names", url: currentURL)
        case .outOfMemory: abortReason = LunetError(.io, "out of memory while removing the body's content coding", url: currentURL)
        }
        return 0
    }

    /// The first piece of a response's body: its content codings are removed here when the
    /// request decodes bodies and lunet knows every coding listed (ContentDecoder).
    private func judgeCodings() {
        codingsJudged = true
        if let codings = contentCodings, decodesBody { decoder = ContentDecoder(codings: codings) }
    }

    /// A piece of the body (decoded when it had content codings lunet removes): to the file of
    /// a download, to the chunk consumer, or to memory under max_body.
    private func store(_ data: UnsafeRawPointer, _ n: Int, _ success: Bool) -> LunetError? {
        if let target = fileTarget, success {
            if !target.hasBegun, let problem = target.begin(status: currentStatus, headers: headers) { return problem }
            if let problem = target.write(data, n) { return problem }
            if streamChunks { queueChunk(data, n) }
            return nil
        }
        if streamChunks && success {
            queueChunk(data, n)
            return nil
        }
        if grpcGuard != nil, success, !grpcGuard!.feed(UnsafeRawBufferPointer(start: data, count: n)) {
            let g = grpcGuard!
            return LunetError(.tooLarge, "a gRPC message announces \(g.announced ?? 0) bytes, more than max_message (\(g.max))", url: currentURL)
        }
        if let maxBody, body.count + n > maxBody {
            return LunetError(.tooLarge, "the body is larger than max_body (\(maxBody) bytes)", url: currentURL)
        }
        body.append(data, n)
        return nil
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
            forgetCodings()   // a new response's codings are its own
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
            if digits != 3 || (i < end && b[i] != 0x20) {
                // RFC 9112 §4: exactly three digits, then a space (or the line's end). libcurl 8
                // reads "2000000" as 200 and 7.88 refuses it: lunet decides, the same on both.
                abortReason = LunetError(.protocol, "the status line's code is not three digits", url: currentURL)
                return 0   // any other count than n makes curl stop (CURLE_WRITE_ERROR)
            }
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
        if first == 0x63 || first == 0x74 {   // c, t
            if let problem = noteCodings(UnsafeBufferPointer(rebasing: b[0..<end])) {
                abortReason = problem
                return 0
            }
        }
        return n
    }

    /// Keeps a `Content-Encoding` field's codings (removed as the body arrives, ContentDecoder)
    /// and checks a `Transfer-Encoding` one: lunet never offers a transfer coding (it sends no
    /// TE), so a response whose body has one other than chunked is refused, the same on every
    /// libcurl (7.88 handed such a body through still coded; 8.x refuses it before the header
    /// callback, CURLE_BAD_CONTENT_ENCODING, whose words CurlErrorWords gives).
    func noteCodings(_ line: UnsafeBufferPointer<UInt8>) -> LunetError? {
        // Most lines are not these two: a colon after 16 or 17 bytes ("content-encoding",
        // "transfer-encoding") rules them out, looked at in place (no search, no String). A name
        // of that length that is one of the two has no colon before it.
        let colon = line.count > 16 && line[16] == 0x3A ? 16 : line.count > 17 && line[17] == 0x3A ? 17 : 0
        guard colon != 0 else { return nil }
        let name = String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self).lowercased()
        guard name == "transfer-encoding" || name == "content-encoding" else { return nil }
        let value = String(decoding: UnsafeBufferPointer(rebasing: line[(colon + 1)...]), as: UTF8.self)
        if name == "content-encoding" {
            // Several fields make one list (RFC 9110 §5.3).
            contentCodings = contentCodings.map { $0 + "," + value } ?? value
            return nil
        }
        let bodiless = (hop ?? request).method == "HEAD" || currentStatus < 200 || currentStatus == 204 || currentStatus == 304
        guard !bodiless, ContentCodings.namesUnknown(value, known: ["chunked", "identity"]) else { return nil }
        return LunetError(.protocol, "\(CurlErrorWords.words(for: CURLE_BAD_CONTENT_ENCODING)): Transfer-Encoding names a coding other than chunked, which lunet never asks for",
                          url: currentURL)
    }

    /// The codings of the response before are gone (a redirect's, a 100 Continue's).
    func forgetCodings() {
        contentCodings = nil
        decoder = nil
        codingsJudged = false
    }
}

// curl's callbacks: C function pointers that find their transfer through the user pointer: the
// EasyHandle for the two called for every header line and body piece (set once per handle),
// the Transfer for the others. The transfer is alive while curl calls them (the loop's
// `running` table holds it until it is released from curl): the two use it without a retain and
// a release around each call (_withUnsafeGuaranteedRef).
let transferWriteCallback: curl_write_callback = { data, size, count, user in
    Unmanaged<EasyHandle>.fromOpaque(user!)._withUnsafeGuaranteedRef {
        $0.transfer.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.receiveBody(data!, size * count) }
    }
}

let transferReadCallback: curl_read_callback = { buffer, size, count, user in
    let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
    return transfer.readUpload(buffer!, size * count)
}

let transferProgressCallback: curl_xferinfo_callback = { user, dltotal, dlnow, ultotal, ulnow in
    let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
    transfer.reportProgress(Int64(dltotal), Int64(dlnow), Int64(ultotal), Int64(ulnow))
    return 0
}

/// Only the request heads (CURLINFO_HEADER_OUT) are kept; verbose text and data are ignored.
let transferDebugCallback: curl_debug_callback = { _, type, data, size, user in
    guard Int32(type.rawValue) == lunet_info_header_out(), let data, let user else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
    transfer.sentHead.removeAll()   // a redirect's request replaces the one before
    transfer.sentHead.append(data, size)
    return 0
}

let transferHeaderCallback: curl_write_callback = { data, size, count, user in
    Unmanaged<EasyHandle>.fromOpaque(user!)._withUnsafeGuaranteedRef {
        $0.transfer.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.receiveHeaderLine(data!, size * count) }
    }
}
