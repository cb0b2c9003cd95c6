/// The flow of a transfer's events (the chunks of a streamed 2xx body, and progress) between
/// libcurl and the consumer that takes them (Lua's on_chunk, a download's progress, an event
/// stream), as a value: each event is a mutating method that returns what the transfer must
/// do (pause libcurl, take the chunk, tell the loop, unpause, complete now or later), as
/// async-http-client's request state machines do. No curl, no loop: tested on its own
/// (BodyFlowTests), and the transfer performs the actions (Transfer+Events.swift).
///
/// The promises it keeps: a consumer gets one batch at a time and nothing more until it says
/// it is through (so a consumer that waits never sees a second batch before the first, and
/// chunks arrive once, in order); once `limit` bytes are held for it (waiting and the batch it
/// is on) libcurl is paused; a transfer that ends while the consumer is busy completes only
/// after the consumer has been through everything.
struct BodyFlow<Outcome> {
    /// Held bytes past which libcurl is paused.
    let limit: Int
    /// Chunks not handed over yet, and their bytes.
    private(set) var waiting: [ByteBuffer] = []
    private(set) var waitingBytes = 0
    /// Bytes held for the consumer: waiting, and the batch it is working on.
    private(set) var heldBytes = 0
    /// A batch was handed over and its consumer has not said it is through.
    private(set) var consumerBusy = false
    /// libcurl was told to pause (CURL_WRITEFUNC_PAUSE) because the consumer is behind.
    private(set) var paused = false
    /// Something (chunks, progress) waits to be handed over.
    private(set) var hasNews = false
    /// The transfer's outcome, held while the consumer still has events to go through.
    private(set) var deferred: Outcome?

    init(limit: Int) { self.limit = limit }

    enum ChunkDecision: Equatable {
        /// Hold the bytes back: libcurl gives them again after an unpause.
        case pause
        /// Take them (`take`).
        case take
    }

    /// libcurl has bytes of the streamed body.
    mutating func chunkArrives() -> ChunkDecision {
        if heldBytes >= limit {
            paused = true
            return .pause
        }
        return .take
    }

    /// A chunk was taken. True when the loop must be told there is news to hand over.
    mutating func take(_ chunk: ByteBuffer) -> Bool {
        waiting.append(chunk)
        waitingBytes += chunk.count
        heldBytes += chunk.count
        return noteNews()
    }

    /// Progress changed, or a chunk came. True when the loop must be told (once per batch, and
    /// never while the consumer is busy: it is told again when the consumer is through).
    mutating func noteNews() -> Bool {
        guard !hasNews else { return false }
        hasNews = true
        return !consumerBusy
    }

    /// The loop's turn to hand over: the batch for the consumer (possibly no chunk, only
    /// progress), or nil when there is no news or the consumer is busy.
    mutating func handOver() -> [ByteBuffer]? {
        guard hasNews, !consumerBusy else { return nil }
        hasNews = false
        consumerBusy = true
        let batch = waiting
        waiting = []
        waitingBytes = 0
        return batch
    }

    enum Next: Equatable {
        /// Nothing to do until more comes.
        case nothing
        /// News came while the consumer was busy: tell the loop.
        case notifyLoop
        /// The transfer had ended: complete on a later turn (the consumer's code is still on
        /// the stack), after handing over what is left.
        case completeLater
    }

    /// The consumer is through with its batch. `unpause`: libcurl was paused and may go on
    /// (it may hand over the held bytes at once).
    mutating func consumerFinished() -> (unpause: Bool, next: Next)? {
        guard consumerBusy else { return nil }
        consumerBusy = false
        heldBytes = waitingBytes
        let unpause = paused
        paused = false
        if deferred != nil { return (unpause, .completeLater) }
        return (unpause, hasNews ? .notifyLoop : .nothing)
    }

    enum Ending {
        /// Complete now with this outcome.
        case complete(Outcome)
        /// Hand over what is left first (the consumer is busy): the outcome is kept.
        case wait
    }

    /// The transfer ended with `outcome` (after the last news was handed over, if the
    /// consumer was free). `firstWait`: this is the first time it must wait (the loop lists it).
    mutating func transferEnds(_ outcome: Outcome) -> (ending: Ending, firstWait: Bool) {
        guard consumerBusy else { return (.complete(outcome), false) }
        let first = deferred == nil
        deferred = outcome
        return (.wait, first)
    }

    /// The later turn after `completeLater`: the outcome to complete with now, or nil when the
    /// consumer is busy again (it got what was left: it will finish, and this comes again).
    mutating func completionDue() -> Outcome? {
        guard let outcome = deferred, !consumerBusy else { return nil }
        return outcome
    }

    /// Everything is dropped (the transfer completed or was cancelled).
    mutating func clear() {
        waiting = []
        waitingBytes = 0
        heldBytes = 0
        deferred = nil
        hasNews = false
    }
}
