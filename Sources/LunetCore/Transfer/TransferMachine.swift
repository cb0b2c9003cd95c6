import CLunetCurl

/// A transfer's lifecycle as a value: each event libcurl, the loop or the caller brings is a
/// mutating method that returns what the transfer must do, the way async-http-client's
/// `HTTPRequestStateMachine` works. No curl, no loop, no buffers: `Transfer` holds the easy
/// handle and the bytes and performs the actions; TransferMachineTests drive the machine with
/// tables of event sequences.
///
/// Where libcurl's versions differ, lunet decides here, the same on each: a reply cut inside
/// its head (7.88 reported success), a status code that is not three digits (8.x read
/// "2000000" as 200), a transfer coding lunet never asked for (7.88 passed it through).
///
/// The events, in this order below: the response's head, its body and the request body sent as
/// it is given, the end and redirects. One file: its state is private(set), written only by its
/// own events. The flow of a streamed body to its consumer is BodyFlow.
struct TransferMachine {
    typealias Outcome = Result<HTTPResponse, LunetError>

    enum Phase: Equatable {
        /// Made, or waiting in a session's line, or between redirect hops.
        case created
        /// In curl, or answered without it and completing on the next turn.
        case running
        /// Its completion has run (or is running): every later event is ignored.
        case finished
    }
    private(set) var phase: Phase = .created

    // The response being received: each redirect, 100 Continue or CONNECT reply starts anew.
    /// Its status (0: no status line yet).
    private(set) var status = 0
    /// The blank line that ends its head has arrived: later field lines are trailers.
    private(set) var headEnded = false
    /// Its `Content-Encoding` list (nil: none); whether the first piece of its body decided
    /// about removing them.
    private(set) var contentCodings: String?
    private(set) var codingsJudged = false
    /// The request being asked now (the hop's, after a redirect) is a HEAD: its reply has no body.
    private(set) var askingHead: Bool
    /// Why the transfer was stopped from a callback on purpose (a body over max_body, a bad
    /// status line). The URL is the transfer's to add: the machine knows no URL.
    private(set) var stopReason: LunetError?

    // A request body sent as it is given (HTTPRequest.Body.stream).
    /// The sender said it is done.
    private(set) var sendClosed = false
    /// curl's sending side is paused (the read callback had nothing to give).
    private(set) var sendPaused = false

    /// The flow of a streamed body and progress to the consumer (BodyFlow.swift).
    var flow: BodyFlow<Outcome>

    /// Redirects the transfer followed itself, and the time they took.
    private(set) var redirected: (hops: Int, time: Double)?

    init(askingHead: Bool, chunkLimit: Int = 1 << 20) {
        self.askingHead = askingHead
        flow = BodyFlow(limit: chunkLimit)
    }

    // MARK: starting and stopping

    /// The loop started it, or it is answered without curl (a cache hit, a refusal).
    mutating func started() { phase = .running }

    /// A callback stops the transfer on purpose: curl is told to stop (the callback returns a
    /// count it did not take) and the transfer fails with `reason`. The first reason stays.
    mutating func stop(_ reason: LunetError) {
        if stopReason == nil { stopReason = reason }
    }

    /// The pause mask libcurl must have now (curl_easy_pause): the receiving side while the
    /// consumer is behind, the sending side while a streamed body has nothing to give. One place
    /// computes it, so that resuming one side never resumes the other.
    var pauseMask: Int32 {
        (flow.paused ? Self.pauseReceive : 0) | (sendPaused ? Self.pauseSend : 0)
    }
    static let pauseReceive: Int32 = 1   // CURLPAUSE_RECV
    static let pauseSend: Int32 = 4      // CURLPAUSE_SEND
}

/// The response's head, line by line (libcurl's header callback).
extension TransferMachine {
    enum HeadAction: Equatable {
        /// A new response starts with this status: drop what the one before left (its field
        /// lines, trailers, body, decoder) and read the reason phrase.
        case newResponse(status: Int)
        /// Keep the line as one of the head's fields.
        case keepField
        /// Keep the line as a trailer field (after the body of a chunked response).
        case keepTrailer
        /// Take the line and keep nothing of it.
        case ignore
        /// Stop the transfer: `stopReason` says why.
        case stop
    }

    mutating func headLine(_ line: ResponseHeadLine) -> HeadAction {
        switch line {
        case .status(let code, _):
            status = code
            headEnded = false
            forgetCodings()   // a new response's codings are its own
            return .newResponse(status: code)
        case .badStatus:
            stop(LunetError(.protocol, "the status line's code is not three digits"))
            return .stop
        case .end:
            headEnded = true
            return .ignore
        case .notAField:
            return .ignore
        case .field:
            // libcurl hands a chunked body's trailer fields to the header callback too.
            return headEnded ? .keepTrailer : .keepField
        case .coding(let field, let value):
            if headEnded { return .keepTrailer }
            if let problem = noteCoding(field, value) {
                stop(problem)
                return .stop
            }
            return .keepField
        }
    }

    /// Keeps a `Content-Encoding` field's codings (removed as the body arrives, ContentDecoder)
    /// and checks a `Transfer-Encoding` one: lunet never offers a transfer coding (it sends no
    /// TE), so a response whose body has one other than chunked is refused, the same on every
    /// libcurl (7.88 handed such a body through still coded; 8.x refuses it before the header
    /// callback, CURLE_BAD_CONTENT_ENCODING, whose words CurlErrorWords gives).
    private mutating func noteCoding(_ field: ResponseHeadLine.CodingField, _ value: String) -> LunetError? {
        if field == .content {
            // Several fields make one list (RFC 9110 §5.3).
            contentCodings = contentCodings.map { $0 + "," + value } ?? value
            return nil
        }
        let bodiless = askingHead || status < 200 || status == 204 || status == 304
        guard !bodiless, ContentCodings.namesUnknown(value, known: ["chunked", "identity"]) else { return nil }
        return LunetError(.protocol, "\(CurlErrorWords.words(for: CURLE_BAD_CONTENT_ENCODING)): Transfer-Encoding names a coding other than chunked, which lunet never asks for")
    }

    mutating func forgetCodings() {
        contentCodings = nil
        codingsJudged = false
    }
}

/// The response's body as libcurl hands it over, and a request body sent as it is given.
extension TransferMachine {
    /// Where a piece of the body goes.
    enum BodyDestination: Equatable {
        /// A download's file (a 2xx body with a file target); also to the consumer when chunks stream.
        case file(alsoChunks: Bool)
        /// The consumer of a streamed 2xx body (on_chunk, an event stream).
        case chunks
        /// Memory, under max_body (every other body: an error status's body always is).
        case memory
    }

    enum BodyStep: Equatable {
        /// Hold the bytes back: libcurl hands them over again once the consumer is through.
        case pause
        /// Take them, to `destination`; `decode`: the first piece of a body whose content
        /// codings lunet removes: start a decoder for these codings first.
        case take(BodyDestination, decode: String?)
    }

    /// libcurl has a piece of the body. `streaming`: chunks go to a consumer; `toFile`: a
    /// download; `decodes`: the request asks for content codings to be removed.
    mutating func bodyArrives(streaming: Bool, toFile: Bool, decodes: Bool) -> BodyStep {
        let success = status >= 200 && status < 300
        if streaming && success && flow.chunkArrives() == .pause { return .pause }
        var decode: String?
        if !codingsJudged {
            codingsJudged = true
            if decodes { decode = contentCodings }
        }
        let destination: BodyDestination = toFile && success ? .file(alsoChunks: streaming)
                                         : streaming && success ? .chunks : .memory
        return .take(destination, decode: decode)
    }

    // MARK: a request body sent as it is given

    enum SendStep: Equatable {
        /// Hand curl this many bytes (0 after the last piece: the body ends).
        case give(Int)
        /// Nothing to give yet: pause the sending side until a piece or the end comes.
        case pause
    }

    /// curl's read callback copied `copied` queued bytes.
    mutating func sendRead(copied: Int) -> SendStep {
        if copied > 0 || sendClosed { return .give(copied) }
        sendPaused = true
        return .pause
    }

    /// The sender gave a piece. The pause mask to set when the sending side was paused (the
    /// receiving side keeps its own), else nil.
    mutating func pieceGiven() -> Int32? { resumeSending() }

    /// The sender is done: the body ends once curl has what is queued. As `pieceGiven`.
    mutating func sendingEnds() -> Int32? {
        sendClosed = true
        return resumeSending()
    }

    private mutating func resumeSending() -> Int32? {
        guard sendPaused else { return nil }
        sendPaused = false
        return pauseMask
    }

    // MARK: the consumer of a streamed body

    /// The consumer is through with its batch (BodyFlow.consumerFinished): the pause mask to
    /// set when the receiving side may go on (the sending side keeps its own), and what next.
    mutating func consumerFinished() -> (resume: Int32?, next: BodyFlow<Outcome>.Next)? {
        guard let (unpause, next) = flow.consumerFinished() else { return nil }
        return (unpause ? pauseMask : nil, next)
    }
}

/// How a transfer ends: libcurl's verdict, the caller's cancel, the loop's timers, a redirect
/// the transfer follows itself.
extension TransferMachine {
    enum CurlVerdict {
        /// libcurl failed it: the transfer words curl's code (Transfer.error(for:)), unless
        /// it was stopped on purpose (`stopReason`).
        case failed
        /// libcurl said done, but the reply was cut: fail with this.
        case cut(LunetError)
        /// A whole response: ask whether it is a redirect to follow, else deliver it.
        case complete
    }

    /// libcurl finished the transfer (`ok`: CURLE_OK). `codingCut`: the decoder's unfinished
    /// coding when the body ended where its coded data may not ("content" when unnamed), else nil.
    func curlFinished(ok: Bool, codingCut: String?) -> CurlVerdict {
        guard ok else { return .failed }
        // A HEAD's or a 1xx-only exchange's head still ends in a blank line; a cut does not
        // (libcurl 7.88 reports success for a reply cut inside its head: status 200, no fields).
        if !headEnded {
            var e = LunetError(.protocol, status == 0 ? "the server closed the connection before a complete status line"
                                                      : "the response ended inside its header block (the connection closed before the blank line that ends it)")
            e.connectionLost = true
            return .cut(e)
        }
        if let coding = codingCut {
            // The connection closed where the coded data may not end (no Content-Length to say so).
            var e = LunetError(.protocol, "the body was cut short: its \(coding) coding ends before its end")
            e.connectionLost = true
            return .cut(e)
        }
        return .complete
    }

    enum Ending: Equatable {
        /// Already finished: nothing to do.
        case ignore
        /// Run the completion now.
        case completeNow
        /// The consumer is busy: complete after it has been through what is left. `firstWait`:
        /// the loop lists the transfer as waiting.
        case waitForConsumer(firstWait: Bool)
    }

    /// The transfer ends with `outcome`. `force` (a cancel, a deadline): complete at once and
    /// drop what the consumer has not had. `consumer`: events go to a consumer, and what was
    /// waiting has just been handed over.
    mutating func ends(with outcome: Outcome, force: Bool, consumer: Bool) -> Ending {
        guard phase != .finished else { return .ignore }
        if !force && consumer {
            let (ending, firstWait) = flow.transferEnds(outcome)
            if case .wait = ending { return .waitForConsumer(firstWait: firstWait) }
        }
        return .completeNow
    }

    /// The completion runs now. True when the loop listed it as waiting for its consumer.
    mutating func completes() -> Bool {
        let waited = flow.deferred != nil
        flow.clear()
        phase = .finished
        return waited
    }

    // MARK: timers

    /// The loop's deadline for the whole call fired. nil when it has finished; otherwise
    /// whether it was still waiting for a connection or a slot (its message says so).
    func deadlineFires() -> Bool? {
        guard phase != .finished else { return nil }
        return phase == .created || status == 0
    }

    /// An h2c transfer's wait for the server's first bytes ran out (Transfer+FirstBytes).
    /// `ownSocket`: libcurl opened a socket for this transfer; `received`: the bytes the kernel
    /// says arrived on it. True when the server never spoke: fail the transfer.
    func silentServer(ownSocket: Bool, received: () -> Int) -> Bool {
        phase != .finished && status == 0 && ownSocket && received() == 0
    }

    // MARK: redirects the transfer follows itself

    /// The next hop starts on a fresh handle: nothing of the last response is left.
    /// `elapsed`: the time the hop that ended took; `askingHead`: the next request is a HEAD.
    mutating func rearm(elapsed: Double, askingHead: Bool) {
        redirected = ((redirected?.hops ?? 0) + 1, (redirected?.time ?? 0) + elapsed)
        phase = .created
        status = 0
        headEnded = false
        forgetCodings()
        stopReason = nil
        self.askingHead = askingHead
    }
}
