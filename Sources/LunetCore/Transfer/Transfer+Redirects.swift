import CLunetCurl
import Glibc

/// A transfer that carries credentials follows its redirects itself (RedirectPolicy decides
/// each step): when a response is complete, the loop asks `nextHop`, and a redirect to follow
/// starts the same transfer again on a fresh handle with the next request, its timeout what is
/// left of the whole call's. Nothing reaches the caller between hops.
extension Transfer {
    enum Hop {
        /// Start again with this request; the hop just ended took `elapsed` seconds.
        case follow(HTTPRequest, elapsed: Double)
        case fail(LunetError)
    }

    /// What to do after the complete response on handle `h`: nil when it is the answer.
    func nextHop(on h: UnsafeMutableRawPointer) -> Hop? {
        guard request.options.followsRedirectsItself else { return nil }
        let current = hop ?? request
        let maxRedirects = request.options.maxRedirects ?? 10
        let hopsSoFar = redirected?.hops ?? 0
        switch RedirectPolicy.decide(status: currentStatus, location: headers["Location"], url: current.url, method: current.method,
                                     hops: hopsSoFar, maxRedirects: maxRedirects) {
        case .deliver:
            return nil
        case .fail(let e):
            return .fail(e)
        case .follow(let step):
            var next = RedirectPolicy.request(after: current, step)
            // Signed for the URL it goes to (within the origin only: across, the keys stayed behind).
            if let keys = next.options.awsCredentials {
                do { try AWSSigV4.sign(&next, keys, now: HTTPDate.currentTime()) } catch { return .fail(error) }
            }
            var total: curl_off_t = 0
            _ = lunet_easy_getinfo_off(h, CURLINFO_TOTAL_TIME_T, &total)
            if let whole = request.options.timeout, whole > 0 {
                let left = whole - (EventLoop.now() - startedAt)
                guard left > 0 else {
                    return .fail(LunetError(.timeout, "the request took longer than its timeout (\(whole) s) across \(hopsSoFar + 1) redirects", url: current.url))
                }
                next.options.timeout = left
            }
            return .follow(next, elapsed: Double(total) / 1_000_000)
        }
    }

    /// Ready to start again for `next`: the handle was released; what the last response left
    /// (its head, its body, a MIME body, an upload's file) is cleared.
    func rearm(for next: HTTPRequest, elapsed: Double) {
        machine.rearm(elapsed: elapsed, askingHead: next.method == "HEAD")
        hop = next
        body.removeAll()
        headerLines.removeAll()
        trailerLines = nil
        decoder = nil
        reasonText = nil
        handleProfile = nil
        if let m = mime { lunet_curl_mime_free(m); mime = nil }
        if uploadFD >= 0 { close(uploadFD); uploadFD = -1 }
        fileTarget?.close()
    }
}
