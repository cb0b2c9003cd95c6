import CLunetCurl

/// What went wrong, in lunet's words, for a libcurl result code. libcurl's own text changes
/// between versions (7.88: "transfer closed with 90 bytes remaining to read"; 8.14: "end of
/// response with 90 bytes missing"): a lunet error's message starts with these words, the same
/// on every libcurl, and carries libcurl's text after them only as a detail
/// ("… (libcurl: …)"). Pure; tested without the network.
public enum CurlErrorWords {
    /// CURLE_TOO_LARGE (libcurl 8.6 and later; lunet is built against 7.88's headers).
    static let tooLarge = CURLcode(rawValue: 100)

    public static func words(for code: CURLcode) -> String {
        switch code {
        case CURLE_PARTIAL_FILE: return "the connection closed before the whole body arrived"
        case CURLE_GOT_NOTHING: return "the server closed the connection without sending a response"
        case CURLE_RECV_ERROR: return "receiving from the server failed"
        case CURLE_SEND_ERROR: return "sending to the server failed"
        case CURLE_COULDNT_RESOLVE_HOST: return "the host name could not be resolved"
        case CURLE_COULDNT_RESOLVE_PROXY: return "the proxy's host name could not be resolved"
        case CURLE_COULDNT_CONNECT: return "the connection could not be made"
        case CURLE_OPERATION_TIMEDOUT: return "the request did not complete within its timeout"
        case CURLE_WEIRD_SERVER_REPLY: return "the server's reply is not valid HTTP"
        case CURLE_HTTP2, CURLE_HTTP2_STREAM: return "the HTTP/2 exchange failed"
        case CURLE_HTTP3: return "the HTTP/3 exchange failed"
        case CURLE_QUIC_CONNECT_ERROR: return "the QUIC connection (HTTP/3) could not be made"
        case CURLE_BAD_CONTENT_ENCODING: return "the response's transfer codings cannot be removed"
        case CURLE_TOO_MANY_REDIRECTS: return "too many redirects"
        case CURLE_PEER_FAILED_VERIFICATION: return "the server's certificate could not be verified"
        case CURLE_SSL_CACERT_BADFILE: return "the CA certificates could not be read"
        case CURLE_SSL_CERTPROBLEM: return "the client certificate or key could not be used"
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH: return "the server's public key is not the pinned one"
        case CURLE_SSL_CONNECT_ERROR: return "the TLS handshake failed"
        case CURLE_FILESIZE_EXCEEDED: return "the body is larger than allowed"
        case CURLE_OUT_OF_MEMORY, tooLarge: return "a response header line is larger than libcurl accepts (100 KB)"
        case CURLE_URL_MALFORMAT: return "the URL is malformed"
        case CURLE_ABORTED_BY_CALLBACK: return "the request was cancelled"
        default:
            switch CurlErrorMapping.kind(of: code) {
            case .tls: return "the TLS connection failed"
            case .argument: return "a request option was refused"
            default: return "the exchange with the server failed"
            }
        }
    }

    /// `words` with libcurl's text for this transfer as the detail (none when it is empty).
    public static func message(for code: CURLcode, libcurlText: String?) -> String {
        let words = words(for: code)
        guard let text = libcurlText, !text.isEmpty else { return words }
        return "\(words) (libcurl: \(text))"
    }
}
