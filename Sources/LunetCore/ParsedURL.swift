import CLunetCurl

/// A request URL parsed once by libcurl (a CURLU handle), handed to transfers with
/// CURLOPT_CURLU instead of the text. Given the text (CURLOPT_URL), libcurl parses it again at
/// the start of every transfer: a request to the same URL as the one before paid ~6.6k
/// instructions for that (a C program driving libcurl, 64 GETs in flight: 74.9k -> 68.3k a
/// request, callgrind). libcurl only reads the handle (it starts each transfer from a copy, and
/// follows redirects on that copy), so transfers in flight may share one; each holds it until
/// it has ended, and the handle is freed with the last of them.
final class ParsedURL {
    let text: String
    let handle: OpaquePointer
    /// The URL as libcurl writes it back from the handle: what it reports as the effective URL
    /// when it parsed the text itself. A transfer sets it as CURLOPT_URL too: libcurl 7.88 takes
    /// the effective URL from CURLOPT_URL's text once a handle has had one, whatever
    /// CURLOPT_CURLU says (a reused handle reported the URL of its transfer before).
    let normalized: UnsafeMutablePointer<CChar>
    /// `normalized` as a String, made once: the effective URL of a transfer that was not
    /// redirected (Transfer.response), without a new string for each response.
    let normalizedText: String

    /// nil when libcurl does not parse `text` (the transfer then gives libcurl the text, and
    /// libcurl's own error names the problem, as before). The path is sent as written but for
    /// its "." and ".." segments, removed as RFC 3986 §5.2.4 says: a percent-encoded dot
    /// ("%2E%2E", which lunet writes for a path parameter of "..") is data, never a segment to
    /// remove. libcurl 8 would remove those too (7.88 did not); lunet decides, so a URL is
    /// sent the same whichever libcurl is loaded.
    init?(_ text: String) {
        guard let handle = text.withCString({ lunet_curl_url_parse_as_is($0) }) else { return nil }
        if let raw = lunet_curl_url_part(handle, CURLUPART_PATH) {
            let path = String(cString: raw)
            lunet_curl_free(raw)
            let kept = URLReference.removeDotSegments(path)
            if kept != path, kept.withCString({ lunet_curl_url_set_path(handle, $0) }) != 0 {
                lunet_curl_url_free(handle)
                return nil
            }
        }
        guard let normalized = lunet_curl_url_part(handle, CURLUPART_URL) else {
            lunet_curl_url_free(handle)
            return nil
        }
        self.text = text
        self.handle = handle
        self.normalized = normalized
        self.normalizedText = String(cString: normalized)
    }

    deinit {
        lunet_curl_url_free(handle)
        lunet_curl_free(normalized)
    }
}
