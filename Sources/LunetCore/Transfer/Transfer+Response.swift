import CLunetCurl
import Glibc

/// The end of a transfer: the response assembled from what arrived and what libcurl reports,
/// or the error that names what went wrong.
extension Transfer {
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
        var requestSize = 0, headerSize = 0
        var uploaded: curl_off_t = 0, downloaded: curl_off_t = 0
        _ = lunet_easy_getinfo_long(h, CURLINFO_REQUEST_SIZE, &requestSize)
        _ = lunet_easy_getinfo_long(h, CURLINFO_HEADER_SIZE, &headerSize)
        _ = lunet_easy_getinfo_off(h, CURLINFO_SIZE_UPLOAD_T, &uploaded)
        _ = lunet_easy_getinfo_off(h, CURLINFO_SIZE_DOWNLOAD_T, &downloaded)
        t.bytesSent = requestSize + Int(uploaded)
        t.bytesReceived = headerSize + Int(downloaded)

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
                                    timings: t, request: request, connectionsOpened: connects,
                                    redirects: redirects + (redirected?.hops ?? 0))
        if let target = fileTarget, target.hasBegun {
            response.download = (written: target.written, restarted: target.restarted, size: target.offset)
        }
        if capturesSentHead { response.sentHead = sentHead.string }
        if let trailers = trailerLines, trailers.count > 0 { response.trailers = HTTPHeaders(parsingLines: trailers.bytes) }
        if let origin = h2cOrigin {   // an h2c answer: its origin's connection can be shared (H2CReuse)
            if versionName == "2" { H2CReuse.learn(origin) } else { H2CReuse.forget(origin) }
        }
        return response
    }

    /// The URL curl reports; the parsed URL's text, with no new string, when it is that one
    /// (no redirect).
    func effectiveURL(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
        guard let pointer else { return currentURL }
        if let parsed = parsedURL, strcmp(pointer, parsed.normalized) == 0 { return parsed.normalizedText }
        return String(cString: pointer)
    }

    /// "HTTP/1.1 404 Not Found": the phrase is what follows the next space after the status
    /// code (`from`: just after its digits), read as bytes: no String of the whole line, no
    /// search of it by index. The usual phrase for the status is a literal: no new string for
    /// most responses. nil when the line has no phrase.
    func reasonPhrase(_ line: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, status: Int) -> String? {
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

    /// What libcurl's end of the transfer means (TransferMachine.curlFinished), with the
    /// decoder's word on whether the body's coded data ended where it may.
    func verdict(for code: CURLcode) -> TransferMachine.CurlVerdict {
        let codingCut = decoder.flatMap { $0.complete ? nil : ($0.unfinishedCoding ?? "content") }
        switch machine.curlFinished(ok: code == CURLE_OK, codingCut: codingCut) {
        case .cut(let e): return .cut(e.at(currentURL))
        case let verdict: return verdict
        }
    }

    func error(for code: CURLcode) -> LunetError {
        if let abortReason { return abortReason }
        // libcurl's message for this transfer, in its handle's buffer (read before the handle
        // is released to the next transfer).
        let message = handle.flatMap { $0.errorBuffer[0] != 0 ? String(cString: $0.errorBuffer) : nil }
        if code == CURLE_UNSUPPORTED_PROTOCOL {
            // The same code for three different faults: the caller's URL, a redirect lunet will
            // not follow, and a reply that is not HTTP (HTTP/0.9). Tell them apart by what happened.
            let scheme = currentURL.prefix(while: { $0 != ":" }).lowercased()
            if scheme != "http" && scheme != "https" {
                return LunetError(.argument, "only http and https URLs are requested, not \(scheme):", url: currentURL)
            }
            if (300..<400).contains(currentStatus) {
                let target = headers["Location"] ?? "another scheme"
                return LunetError(.redirects, "refused to follow a redirect to \(target): only http and https are followed", url: currentURL)
            }
            let detail = message ?? String(cString: lunet_curl_easy_strerror(code))
            return LunetError(.protocol, "the reply is not HTTP/1.x or HTTP/2: \(detail)", url: currentURL)
        }
        // libcurl 7.88 refuses a header line over 100 KB with "out of memory" and no detail (8.x
        // with CURLE_TOO_LARGE): CurlErrorWords names it.
        if (code == CURLE_OUT_OF_MEMORY || code == CurlErrorWords.tooLarge) && message == nil {
            return LunetError(.protocol, CurlErrorWords.words(for: code), url: currentURL)
        }
        let detail = message ?? String(cString: lunet_curl_easy_strerror(code))
        if CurlErrorMapping.mayBeTheProxys(code),
           let proxy = ProxyInEffect.proxy(for: currentURL, option: request.options.proxy, environment: ProxyInEffect.processEnvironment) {
            // libcurl's message names the address it could not reach, not that it was the proxy.
            return LunetError(.connect, "the proxy \(ProxyInEffect.shown(proxy)) could not be reached: \(detail)", url: currentURL)
        }
        if code == CURLE_OPERATION_TIMEDOUT {
            // No address picked yet: libcurl never began to connect (it held the transfer for a
            // per-host or total slot).
            var ip: UnsafeMutablePointer<CChar>? = nil
            if let h = handle?.raw { _ = lunet_easy_getinfo_str(h, CURLINFO_PRIMARY_IP, &ip) }
            let waiting = ip == nil || ip?.pointee == 0
            let timeout = (request.options.timeout ?? 0) > 0 ? request.options.timeout : nil
            return LunetError(.timeout, Self.timedOut(after: timeout, waitingForConnection: waiting) + " (libcurl: \(detail))", url: currentURL)
        }
        if code == CURLE_PARTIAL_FILE, let h = handle?.raw, let promised = headers["Content-Length"].flatMap({ Int64($0) }) {
            // How much arrived, in lunet's words (libcurl words it differently in each version).
            var got: curl_off_t = 0
            _ = lunet_easy_getinfo_off(h, CURLINFO_SIZE_DOWNLOAD_T, &got)
            let words = "\(CurlErrorWords.words(for: code)): \(got) of \(promised) bytes, \(promised - Int64(got)) missing"
            var e = LunetError(.protocol, "\(words) (libcurl: \(detail))", url: currentURL)
            e.connectionLost = true
            return e
        }
        if CurlErrorMapping.mayMeanAReusedConnectionWasGone(code), currentStatus == 0, let h = handle?.raw {
            // libcurl 8 sends on a pooled HTTP/2 connection the server has since closed (a
            // restart) and reports a framing error; 7.88 fell back to HTTP/1.1 there. Nothing of
            // a response came and no connection was opened for this request: the connection was
            // lost, as libcurl itself says of a reused HTTP/1.1 one (a caller may try again).
            var connects = 0
            _ = lunet_easy_getinfo_long(h, CURLINFO_NUM_CONNECTS, &connects)
            if connects == 0 {
                var e = LunetError(.protocol, "the connection, reused from an earlier request, closed before a response began (libcurl: \(detail))", url: currentURL)
                e.connectionLost = true
                return e
            }
        }
        let kind = CurlErrorMapping.kind(of: code)
        if kind == .tls, let cert = request.options.clientCertificate {
            // Which files were in play, in lunet's words: OpenSSL's libcurl names them, GnuTLS's
            // does not ("error reading X.509 potentially-encrypted key file").
            let files = "client certificate \(cert)" + (request.options.clientKey.map { ", key \($0)" } ?? "")
            return LunetError(.tls, "\(CurlErrorWords.words(for: code)) (\(files); libcurl: \(detail))", url: currentURL)
        }
        var e = LunetError(kind, CurlErrorWords.message(for: code, libcurlText: detail), url: currentURL)
        e.connectionLost = CurlErrorMapping.losesTheConnection(code)
        return e
    }
}
