import CLunetCurl
import Glibc

/// One request on one curl easy handle, from `start` until its completion has run.
/// Owned by the loop thread; the loop keeps it alive while curl holds its handle.
public final class Transfer {
    public enum State { case created, running, finished }
    public typealias Completion = (Result<HTTPResponse, LunetError>) -> Void

    /// The request as made (a `let`: read without a copy on every path; a redirect the
    /// transfer follows itself goes in `hop`).
    public let request: HTTPRequest
    /// The request of the redirect being followed (Transfer+Redirects.swift), nil before one.
    var hop: HTTPRequest?
    /// The URL being asked now: the hop's, else the request's.
    var currentURL: String { hop?.url ?? request.url }
    /// Where the transfer is in its life, and what it decided so far (TransferMachine.swift):
    /// the transfer performs what the machine returns.
    var machine: TransferMachine
    public var state: State {
        switch machine.phase {
        case .created: return .created
        case .running: return .running
        case .finished: return .finished
        }
    }
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
    /// Why a callback stopped the transfer on purpose (a body over max_body), about the URL asked.
    var abortReason: LunetError? {
        guard let reason = machine.stopReason else { return nil }
        return reason.url == nil ? reason.at(currentURL) : reason
    }
    let maxBody: Int?
    /// A gRPC call's answer: its messages' length prefixes checked as they arrive.
    var grpcGuard: GRPCFrameGuard?
    /// The status of the response being received (each redirect or 100 starts a new one).
    var currentStatus: Int { machine.status }
    /// The current response's decoder once its body begins (nil: nothing lunet removes).
    var decoder: ContentDecoder?

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
    /// consumer says it is done (`consumerFinished`): see BodyFlow.
    public var onEvents: ((Transfer, [ByteBuffer]) -> Void)?
    /// Bytes held for the consumer past which the body is paused (libcurl's
    /// CURL_WRITEFUNC_PAUSE) until it is through. Set before the transfer starts.
    public var chunkBufferLimit: Int {
        get { machine.flow.limit }
        set { machine.flow = BodyFlow(limit: newValue) }
    }
    /// A batch was handed over and its consumer has not finished.
    public var consumerBusy: Bool { machine.flow.consumerBusy }
    /// The status and header fields of the response being received (the last one, after
    /// redirects and 100s), for consumers of a stream that must look at them first.
    public var receivedHead: (status: Int, headers: HTTPHeaders) { (currentStatus, headers) }
    /// (downloaded, download total, uploaded, upload total) as curl last reported them.
    public internal(set) var progress: (download: Int64, downloadTotal: Int64, upload: Int64, uploadTotal: Int64) = (0, 0, 0, 0)
    weak var loop: EventLoop?
    var uploadFD: Int32 = -1
    /// A body sent as it is given (Body.stream; Transfer+Send.swift): the pieces not yet read
    /// by curl, how far into the first, whether the sender is done, and whether curl waits.
    var sendQueue: [ByteBuffer] = []
    var sendOffset = 0
    /// Bytes given to sendPiece and not yet handed to curl: what a sender that outruns the
    /// network holds (gRPC's send waits while it is past its send_buffer).
    public internal(set) var queuedToSend = 0
    /// The jar the transfer was started with (a redirect it follows itself starts again with it).
    var cookieJar: CookieJar?
    /// When the transfer was first started (EventLoop.now()): the whole call's timeout counts
    /// from it, across the redirects it follows itself.
    var startedAt = 0.0
    /// For a transfer that followed redirects itself: the hops and the time they took.
    var redirected: (hops: Int, time: Double)? { machine.redirected }
    /// The loop's timer that bounds the whole call (Transfer+Deadline.swift).
    var deadlineTimer: EventLoop.TimerID?
    /// An h2c transfer's wait for the server's first bytes (Transfer+FirstBytes), and the socket
    /// libcurl opened for it (-1: none; a transfer sharing a connection opens none).
    var firstBytesTimer: EventLoop.TimerID?
    var openedSocket: Int32 = -1
    /// The origin of an h2c request on a libcurl older than 8.0 (H2CReuse), else nil.
    var h2cOrigin: String?

    public init(request: consuming HTTPRequest, completion: @escaping Completion) {
        self.maxBody = request.options.maxBody
        machine = TransferMachine(askingHead: request.method == "HEAD")
        if let max = request.options.grpcMaxMessage { grpcGuard = GRPCFrameGuard(max: max) }
        self.completion = completion
        self.request = request   // moved in: the last use
    }

    deinit {
        if uploadFD >= 0 { close(uploadFD) }
        if let mime { lunet_curl_mime_free(mime) }
    }

    func markRunning() { machine.started() }

    /// Runs the completion once, whatever path got here. A transfer whose events consumer has
    /// events still to go through completes after they are through (the request resolves after
    /// its last chunk's callback returned); `force` (a cancel) completes at once and drops them.
    func finish(_ result: Result<HTTPResponse, LunetError>, force: Bool = false) {
        guard state != .finished else { return }
        disarmDeadline()
        disarmFirstBytesWatch()
        fileTarget?.close()
        let consumer = !force && onEvents != nil
        if consumer { deliverEvents() }   // what waits goes first: the machine then judges
        switch machine.ends(with: result, force: force, consumer: consumer) {
        case .ignore: return
        case .waitForConsumer(let firstWait):
            if firstWait { loop?.noteWaitingForConsumer(self) }
            return
        case .completeNow: complete(result)
        }
    }

    func complete(_ result: Result<HTTPResponse, LunetError>) {
        // An h2c request that failed: its origin's shared connection may be gone (H2CReuse).
        if let origin = h2cOrigin, case .failure = result { H2CReuse.forget(origin) }
        if machine.completes() { loop?.noteConsumerDone(self) }
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
    /// A profile names the cookie jar too: a handle keeps a jar's share attached while it waits
    /// configured, so only a transfer of the same jar may take it. Two jars are never one
    /// profile, however alike their sessions. The jar is named, not held (it holds the loop,
    /// which holds the profiles): a jar that ends first takes its handles back from the loop
    /// (EventLoop.forgetJar, from CookieJar's deinit), before its identity can name another.
    final class Profile: Equatable {
        let method: String
        let options: TransferOptions
        let jar: ObjectIdentifier?
        init(method: String, options: TransferOptions, jar: ObjectIdentifier?) {
            self.method = method
            self.options = options
            self.jar = jar
        }
        static func == (a: Profile, b: Profile) -> Bool {
            a === b || (a.jar == b.jar && a.method == b.method && a.options == b.options)
        }
        /// Whether a transfer of `request` with cookie jar `jar` has this profile.
        func describes(_ request: HTTPRequest, jar: ObjectIdentifier?) -> Bool {
            self.jar == jar && method == request.method && options == request.options
        }
    }

    /// Whether this transfer has a profile at all (see Profile). A redirect hop has none: its
    /// method and options may not be the request's (a 303 turns a POST into a GET), and a
    /// handle kept under the request's profile would go out as the hop was set up.
    var hasProfile: Bool {
        guard hop == nil, case .none = request.body, fileTarget == nil, !wantsProgress, !streamChunks, !capturesSentHead else { return false }
        return true
    }
}
