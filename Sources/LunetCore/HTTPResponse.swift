/// What came back. The body stays in one buffer until someone asks for it.
public final class HTTPResponse {
    /// The request head exactly as libcurl sent it (set for recorded transfers only).
    public var sentHead: String?
    public struct Timings: Sendable {
        /// Seconds from the start of the transfer to each point (curl's *_TIME_T values).
        public var dns = 0.0, connect = 0.0, tls = 0.0, ttfb = 0.0, total = 0.0
        /// Bytes on the wire: the request's head and body sent, the response's head and body
        /// received (before decoding), as libcurl counts them (`lunet load`'s data_sent/received).
        public var bytesSent = 0, bytesReceived = 0
        public init() {}
    }

    public let status: Int
    public let reason: String
    /// The header fields. A response from the network keeps its header lines as bytes until
    /// this is first read (on the thread that owns the response: `LunetThread` reads it before
    /// handing a response to another thread).
    public var headers: HTTPHeaders {
        if let parsedHeaders { return parsedHeaders }
        let parsed = headerLines.map { HTTPHeaders(parsingLines: $0.bytes) } ?? HTTPHeaders()
        parsedHeaders = parsed
        headerLines = nil
        return parsed
    }
    private var parsedHeaders: HTTPHeaders?
    private var headerLines: ByteBuffer?
    public let body: ByteBuffer
    /// The URL after redirects.
    public let url: String
    public let httpVersion: String
    public let timings: Timings
    public let request: HTTPRequest
    /// New connections this transfer opened (0 when it reused one).
    public let connectionsOpened: Int
    public let redirects: Int
    /// For a download: bytes written to the file by this transfer, whether a 200 made it start
    /// over from zero, and the file's size after the last byte.
    public internal(set) var download: (written: Int64, restarted: Bool, size: Int64)?
    /// How the session's cache answered: "miss", "hit", "revalidated", "stale" or "offline"
    /// (nil without a cache).
    public var cacheStatus: String?
    /// Trailer fields that followed a chunked body (RFC 9110 §6.5), kept apart from `headers`:
    /// a recipient must not merge them into the header section (§6.5.1), and a cache must not
    /// combine them with the header fields it stores (RFC 9111 §3.1). The cache discards them,
    /// as §3.1 allows: a response served from it has none.
    public internal(set) var trailers = HTTPHeaders()

    public convenience init(status: Int, reason: String, headers: HTTPHeaders, body: ByteBuffer, url: String, httpVersion: String,
                            timings: Timings, request: HTTPRequest, connectionsOpened: Int, redirects: Int) {
        self.init(status: status, reason: reason, parsed: headers, lines: nil, body: body, url: url, httpVersion: httpVersion,
                  timings: timings, request: request, connectionsOpened: connectionsOpened, redirects: redirects)
    }

    /// A response whose header lines ("Name: value\n" each) are parsed when first read.
    convenience init(status: Int, reason: String, headerLines: ByteBuffer, body: ByteBuffer, url: String, httpVersion: String,
                     timings: Timings, request: HTTPRequest, connectionsOpened: Int, redirects: Int) {
        self.init(status: status, reason: reason, parsed: nil, lines: headerLines, body: body, url: url, httpVersion: httpVersion,
                  timings: timings, request: request, connectionsOpened: connectionsOpened, redirects: redirects)
    }

    private init(status: Int, reason: String, parsed: HTTPHeaders?, lines: ByteBuffer?, body: ByteBuffer, url: String,
                 httpVersion: String, timings: Timings, request: HTTPRequest, connectionsOpened: Int, redirects: Int) {
        self.status = status
        self.reason = reason
        self.parsedHeaders = parsed
        self.headerLines = lines
        self.body = body
        self.url = url
        self.httpVersion = httpVersion
        self.timings = timings
        self.request = request
        self.connectionsOpened = connectionsOpened
        self.redirects = redirects
    }

    public var ok: Bool { (200..<300).contains(status) }
    public var elapsed: Double { timings.total }

    /// The reason phrase HTTP/2 and HTTP/3 no longer send.
    public static func standardReason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"; case 101: "Switching Protocols"
        case 200: "OK"; case 201: "Created"; case 202: "Accepted"; case 203: "Non-Authoritative Information"
        case 204: "No Content"; case 205: "Reset Content"; case 206: "Partial Content"
        case 300: "Multiple Choices"; case 301: "Moved Permanently"; case 302: "Found"; case 303: "See Other"
        case 304: "Not Modified"; case 307: "Temporary Redirect"; case 308: "Permanent Redirect"
        case 400: "Bad Request"; case 401: "Unauthorized"; case 402: "Payment Required"; case 403: "Forbidden"
        case 404: "Not Found"; case 405: "Method Not Allowed"; case 406: "Not Acceptable"; case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"; case 409: "Conflict"; case 410: "Gone"; case 411: "Length Required"
        case 412: "Precondition Failed"; case 413: "Content Too Large"; case 414: "URI Too Long"
        case 415: "Unsupported Media Type"; case 416: "Range Not Satisfiable"; case 417: "Expectation Failed"
        case 418: "I'm a teapot"; case 421: "Misdirected Request"; case 422: "Unprocessable Content"
        case 425: "Too Early"; case 426: "Upgrade Required"; case 428: "Precondition Required"
        case 429: "Too Many Requests"; case 431: "Request Header Fields Too Large"; case 451: "Unavailable For Legal Reasons"
        case 500: "Internal Server Error"; case 501: "Not Implemented"; case 502: "Bad Gateway"
        case 503: "Service Unavailable"; case 504: "Gateway Timeout"; case 505: "HTTP Version Not Supported"
        default: ""
        }
    }
}
