import CLunetCurl

/// Which kind of lunet error a libcurl result code is. Pure; tested without the network.
public enum CurlErrorMapping {
    /// The server closed or reset the connection, or sent nothing: an empty reply
    /// (GOT_NOTHING), a reset or failed read (RECV_ERROR), a failed write (SEND_ERROR), a body
    /// cut short (PARTIAL_FILE).
    public static func losesTheConnection(_ code: CURLcode) -> Bool {
        code == CURLE_GOT_NOTHING || code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR || code == CURLE_PARTIAL_FILE
    }

    /// A failure that, on a connection reused from an earlier request and before any of the
    /// response arrived, means that connection was gone: libcurl 8 reports a pooled HTTP/2
    /// connection the server closed as a framing error (Transfer.error(for:) checks the rest).
    public static func mayMeanAReusedConnectionWasGone(_ code: CURLcode) -> Bool {
        code == CURLE_HTTP2 || code == CURLE_HTTP2_STREAM
    }

    /// A failure that, with a proxy in use, happened at the proxy: with one, libcurl connects to
    /// the proxy and never to the server (the server's name is the proxy's to resolve), so a
    /// connection that could not be made, a proxy name that did not resolve and a proxy
    /// handshake that failed (CURLE_PROXY: SOCKS, HTTPS proxies) are all the proxy's.
    public static func mayBeTheProxys(_ code: CURLcode) -> Bool {
        code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_PROXY || code == CURLE_PROXY
    }

    public static func kind(of code: CURLcode) -> LunetError.Kind {
        switch code {
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_FUNCTION_ARGUMENT:
            return .argument
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .dns
        case CURLE_COULDNT_CONNECT, CURLE_SEND_ERROR, CURLE_INTERFACE_FAILED:
            return .connect
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_USE_SSL_FAILED, CURLE_SSL_ENGINE_NOTFOUND,
             CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED:
            return .tls
        case CURLE_TOO_MANY_REDIRECTS:
            return .redirects
        case CURLE_ABORTED_BY_CALLBACK:
            return .cancelled
        case CURLE_FILESIZE_EXCEEDED:
            return .tooLarge
        default:
            // A malformed, cut-off or otherwise broken exchange: PARTIAL_FILE, RECV_ERROR,
            // GOT_NOTHING, WEIRD_SERVER_REPLY, HTTP2, BAD_CONTENT_ENCODING, ...
            return .protocol
        }
    }
}
