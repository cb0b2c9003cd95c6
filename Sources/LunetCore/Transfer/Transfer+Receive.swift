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
            abortReason = LunetError(.tooLarge, "the body is larger than max_body (\(maxBody) bytes)", url: currentURL)
            return 0  // any other count than n makes curl stop with CURLE_WRITE_ERROR
        }
        body.append(data, n)
        return n
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
    func passUnknownCodings(_ line: UnsafeBufferPointer<UInt8>) {
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
