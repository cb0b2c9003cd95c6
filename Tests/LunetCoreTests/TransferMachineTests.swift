import CLunetCurl
import XCTest
@testable import LunetCore

/// A transfer's lifecycle as a value (TransferMachine): tables of event sequences and the
/// action each event returns. No curl, no loop, no network.
final class TransferMachineTests: XCTestCase {
    enum Event {
        case start
        /// A header line as libcurl hands it over (CR LF added).
        case head(String)
        /// A piece of the body: chunks to a consumer (`stream`), to a file, decoded.
        case body(stream: Bool = false, file: Bool = false, decodes: Bool = true)
        case handOver
        case consumerDone
        /// curl's read callback copied this many queued bytes of a streamed request body.
        case sendRead(Int)
        case piece
        case sendEnds
        case curlDone(ok: Bool, codingCut: String? = nil)
        case ends(force: Bool, consumer: Bool)
        case completes
        case deadline
        case rearm(head: Bool)
    }

    /// The action `event` returns, in words a table can hold.
    func drive(_ m: inout TransferMachine, _ event: Event) -> String {
        switch event {
        case .start:
            m.started()
            return "running"
        case .head(let text):
            var bytes = Array((text + "\r\n").utf8)
            let line = bytes.withUnsafeMutableBufferPointer { ResponseHeadLine.read(UnsafeBufferPointer($0)).line }
            switch m.headLine(line) {
            case .newResponse(let status): return "new \(status)"
            case .keepField: return "field"
            case .keepTrailer: return "trailer"
            case .ignore: return "ignore"
            case .stop: return "stop: " + (m.stopReason?.message ?? "?")
            }
        case .body(let stream, let file, let decodes):
            switch m.bodyArrives(streaming: stream, toFile: file, decodes: decodes) {
            case .pause: return "pause"
            case .take(let to, let decode):
                let place: String
                switch to {
                case .memory: place = "memory"
                case .chunks: place = "chunks"
                case .file(let also): place = also ? "file+chunks" : "file"
                }
                return decode.map { "\(place), decode \($0)" } ?? place
            }
        case .handOver:
            return m.flow.handOver().map { "batch of \($0.count)" } ?? "nothing"
        case .consumerDone:
            guard let (resume, next) = m.consumerFinished() else { return "not busy" }
            return "resume \(resume.map(String.init) ?? "-"), \(next)"
        case .sendRead(let n):
            switch m.sendRead(copied: n) {
            case .give(let k): return "give \(k)"
            case .pause: return "pause send"
            }
        case .piece: return "resume \(m.pieceGiven().map(String.init) ?? "-")"
        case .sendEnds: return "resume \(m.sendingEnds().map(String.init) ?? "-")"
        case .curlDone(let ok, let cut):
            switch m.curlFinished(ok: ok, codingCut: cut) {
            case .failed: return "failed"
            case .cut(let e): return "cut: \(e.message)"
            case .complete: return "complete"
            }
        case .ends(let force, let consumer):
            switch m.ends(with: .failure(LunetError(.cancelled, "x")), force: force, consumer: consumer) {
            case .ignore: return "ignore"
            case .completeNow: return "complete now"
            case .waitForConsumer(let first): return first ? "wait (first)" : "wait"
            }
        case .completes: return m.completes() ? "completed, was waiting" : "completed"
        case .deadline: return m.deadlineFires().map { $0 ? "abort, waiting for a connection" : "abort" } ?? "ignore"
        case .rearm(let head):
            m.rearm(elapsed: 0.5, askingHead: head)
            return "rearmed"
        }
    }

    /// Runs each row on a fresh machine: every event's action must be the one written beside it.
    func check(_ rows: [(Event, String)], head: Bool = false, limit: Int = 100, line: UInt = #line) -> TransferMachine {
        var m = TransferMachine(askingHead: head, chunkLimit: limit)
        for (i, (event, expected)) in rows.enumerated() {
            XCTAssertEqual(drive(&m, event), expected, "event \(i + 1): \(event)", line: line)
        }
        return m
    }

    func testAPlainGET() {
        let m = check([
            (.start, "running"),
            (.head("HTTP/1.1 200 OK"), "new 200"),
            (.head("Content-Type: text/plain"), "field"),
            (.head("no colon"), "ignore"),
            (.head(""), "ignore"),
            (.body(), "memory"),
            (.body(), "memory"),
            (.curlDone(ok: true), "complete"),
            (.ends(force: false, consumer: false), "complete now"),
            (.completes, "completed"),
            (.ends(force: true, consumer: false), "ignore"),
            (.deadline, "ignore"),
        ])
        XCTAssertEqual(m.phase, .finished)
        XCTAssertEqual(m.status, 200)
    }

    func testInterimAndRedirectResponsesStartAfresh() {
        let m = check([
            (.start, "running"),
            (.head("HTTP/1.1 100 Continue"), "new 100"),
            (.head(""), "ignore"),
            (.head("HTTP/1.1 301 Moved"), "new 301"),
            (.head("Content-Encoding: gzip"), "field"),
            (.head(""), "ignore"),
            (.body(), "memory, decode gzip"),
            (.head("HTTP/2 200"), "new 200"),
            (.head("Content-Encoding: br"), "field"),
            (.head(""), "ignore"),
            (.body(), "memory, decode br"),
            (.body(), "memory"),
        ])
        XCTAssertEqual(m.contentCodings, "br", "the 301's codings are not the 200's")
    }

    func testSeveralContentEncodingFieldsMakeOneListAndOnlyWhenTheRequestDecodes() {
        _ = check([
            (.head("HTTP/1.1 200 OK"), "new 200"),
            (.head("Content-Encoding: gzip"), "field"),
            (.head("content-encoding:\tbr "), "field"),
            (.head(""), "ignore"),
            (.body(), "memory, decode gzip,br"),
        ])
        _ = check([
            (.head("HTTP/1.1 200 OK"), "new 200"),
            (.head("Content-Encoding: gzip"), "field"),
            (.head(""), "ignore"),
            (.body(decodes: false), "memory"),
        ])
    }

    func testTrailersAfterTheBlankLineAreKeptApart() {
        _ = check([
            (.head("HTTP/1.1 200 OK"), "new 200"),
            (.head("Transfer-Encoding: chunked"), "field"),
            (.head(""), "ignore"),
            (.body(), "memory"),
            (.head("Grpc-Status: 0"), "trailer"),
            (.head("Content-Encoding: gzip"), "trailer"),
            (.head(""), "ignore"),
            (.curlDone(ok: true), "complete"),
        ])
    }

    func testStatusLinesWhoseCodeIsNotThreeDigitsStopOnEveryLibcurl() {
        for line in ["HTTP/1.1 2000000 OK", "HTTP/1.1 20 OK", "HTTP/1.1 20x OK", "HTTP/1.1 99999999999999999999: x", "HTTP/1.1 OK"] {
            let m = check([(.start, "running"), (.head(line), "stop: the status line's code is not three digits")])
            XCTAssertEqual(m.status, 0, line)
            XCTAssertEqual(m.stopReason?.kind, .protocol, line)
        }
        _ = check([(.head("HTTP/1.1 204"), "new 204")])   // no phrase at all is a status line
    }

    func testATransferCodingLunetNeverAskedForIsRefusedUnlessTheReplyHasNoBody() {
        let refused = "stop: \(CurlErrorWords.words(for: CURLE_BAD_CONTENT_ENCODING)): Transfer-Encoding names a coding other than chunked, which lunet never asks for"
        _ = check([(.head("HTTP/1.1 200 OK"), "new 200"), (.head("Transfer-Encoding: gzip, chunked"), refused)])
        _ = check([(.head("HTTP/1.1 200 OK"), "new 200"), (.head("Transfer-Encoding: compress"), refused)])
        _ = check([(.head("HTTP/1.1 200 OK"), "new 200"), (.head("Transfer-Encoding: identity, chunked"), "field")])
        _ = check([(.head("HTTP/1.1 204 No Content"), "new 204"), (.head("Transfer-Encoding: compress"), "field")])
        _ = check([(.head("HTTP/1.1 304 Not Modified"), "new 304"), (.head("Transfer-Encoding: compress"), "field")])
        _ = check([(.head("HTTP/1.1 100 Continue"), "new 100"), (.head("Transfer-Encoding: compress"), "field")])
        _ = check([(.head("HTTP/1.1 200 OK"), "new 200"), (.head("Transfer-Encoding: compress"), "field")], head: true)
    }

    func testARedirectHopStartsAsAFreshHeadAndCountsItsHops() {
        var m = check([])
        XCTAssertEqual(drive(&m, .start), "running")
        XCTAssertEqual(drive(&m, .head("HTTP/1.1 302 Found")), "new 302")
        XCTAssertEqual(drive(&m, .head("")), "ignore")
        XCTAssertEqual(drive(&m, .curlDone(ok: true)), "complete")
        XCTAssertEqual(drive(&m, .rearm(head: true)), "rearmed")
        XCTAssertEqual(m.phase, .created)
        XCTAssertEqual(m.status, 0)
        XCTAssertEqual(drive(&m, .deadline), "abort, waiting for a connection", "not started again yet")
        XCTAssertEqual(drive(&m, .start), "running")
        XCTAssertEqual(drive(&m, .head("HTTP/1.1 200 OK")), "new 200")
        XCTAssertEqual(drive(&m, .head("Transfer-Encoding: compress")), "field", "the hop is a HEAD: no body to refuse")
        XCTAssertEqual(m.redirected?.hops, 1)
        XCTAssertEqual(m.redirected?.time, 0.5)
        XCTAssertEqual(drive(&m, .deadline), "abort", "a status came: not waiting for a connection")
    }

    func testRepliesCutShortAreFailuresWhateverLibcurlSaid() {
        _ = check([(.start, "running"), (.curlDone(ok: true), "cut: the server closed the connection before a complete status line")])
        _ = check([(.head("HTTP/1.1 200 OK"), "new 200"), (.head("A: b"), "field"),
                   (.curlDone(ok: true), "cut: the response ended inside its header block (the connection closed before the blank line that ends it)")])
        _ = check([(.head("HTTP/1.1 200 OK"), "new 200"), (.head(""), "ignore"),
                   (.curlDone(ok: true, codingCut: "gzip"), "cut: the body was cut short: its gzip coding ends before its end")])
        _ = check([(.head("HTTP/1.1 200 OK"), "new 200"), (.curlDone(ok: false), "failed")])
        var m = TransferMachine(askingHead: false)
        _ = drive(&m, .curlDone(ok: true))
        if case .cut(let e) = m.curlFinished(ok: true, codingCut: nil) { XCTAssertTrue(e.connectionLost) } else { XCTFail("not cut") }
    }

    func testAStreamedBodyPausesPastTheLimitAndResumesOnlyTheReceivingSide() {
        _ = check([
            (.start, "running"),
            (.head("HTTP/1.1 200 OK"), "new 200"),
            (.head(""), "ignore"),
            (.body(stream: true), "chunks"),
            (.sendRead(0), "pause send"),          // a bidirectional call: nothing to send yet
            (.handOver, "nothing"),                // the transfer queues the chunk: drive() takes none
            (.consumerDone, "not busy"),
        ])
        var m = TransferMachine(askingHead: false, chunkLimit: 10)
        _ = drive(&m, .head("HTTP/1.1 200 OK"))
        _ = drive(&m, .head(""))
        XCTAssertEqual(drive(&m, .body(stream: true)), "chunks")
        _ = m.flow.take(ByteBuffer(copying: Array("0123456789ab".utf8), count: 12))
        XCTAssertEqual(drive(&m, .handOver), "batch of 1")
        XCTAssertEqual(drive(&m, .body(stream: true)), "pause", "12 bytes held, the limit is 10")
        XCTAssertEqual(drive(&m, .sendRead(0)), "pause send")
        XCTAssertEqual(m.pauseMask, TransferMachine.pauseReceive | TransferMachine.pauseSend)
        XCTAssertEqual(drive(&m, .consumerDone), "resume 4, nothing", "the receiving side goes on, the sending side stays paused")
        XCTAssertEqual(drive(&m, .piece), "resume 0", "a piece resumes the sending side")
        XCTAssertEqual(drive(&m, .sendRead(5)), "give 5")
        XCTAssertEqual(drive(&m, .sendRead(0)), "pause send")
        XCTAssertEqual(drive(&m, .sendEnds), "resume 0")
        XCTAssertEqual(drive(&m, .sendRead(0)), "give 0", "the end of the body")
        XCTAssertEqual(drive(&m, .sendEnds), "resume -", "not paused: nothing to resume")
    }

    func testAPieceWhileTheReceivingSideIsPausedKeepsItPaused() {
        var m = TransferMachine(askingHead: false, chunkLimit: 1)
        _ = drive(&m, .head("HTTP/1.1 200 OK"))
        _ = m.flow.take(ByteBuffer(copying: [1, 2], count: 2))
        _ = drive(&m, .handOver)
        XCTAssertEqual(drive(&m, .body(stream: true)), "pause")
        XCTAssertEqual(drive(&m, .sendRead(0)), "pause send")
        XCTAssertEqual(drive(&m, .piece), "resume 1", "CURLPAUSE_RECV: only the sending side goes on")
    }

    func testAnErrorStatusBodyGoesToMemoryEvenWhenStreamingOrDownloading() {
        _ = check([
            (.head("HTTP/1.1 404 Not Found"), "new 404"), (.head(""), "ignore"),
            (.body(stream: true, file: true), "memory"),
        ])
        _ = check([
            (.head("HTTP/1.1 206 Partial Content"), "new 206"), (.head(""), "ignore"),
            (.body(stream: true, file: true), "file+chunks"),
            (.body(stream: false, file: true), "file"),
        ])
    }

    func testAnEndWhileTheConsumerIsBusyWaitsOnceAndACancelDoesNot() {
        var m = TransferMachine(askingHead: false)
        _ = drive(&m, .start)
        _ = m.flow.take(ByteBuffer(copying: [1], count: 1))
        XCTAssertEqual(drive(&m, .handOver), "batch of 1")
        XCTAssertEqual(drive(&m, .ends(force: false, consumer: true)), "wait (first)")
        XCTAssertEqual(drive(&m, .ends(force: false, consumer: true)), "wait", "listed once")
        XCTAssertEqual(drive(&m, .consumerDone), "resume -, completeLater")
        XCTAssertEqual(drive(&m, .completes), "completed, was waiting")
        XCTAssertEqual(drive(&m, .ends(force: true, consumer: false)), "ignore")

        var c = TransferMachine(askingHead: false)
        _ = drive(&c, .start)
        _ = c.flow.take(ByteBuffer(copying: [1], count: 1))
        _ = drive(&c, .handOver)
        XCTAssertEqual(drive(&c, .ends(force: true, consumer: false)), "complete now", "a cancel drops what the consumer has not had")
    }

    func testTheDeadlineOfATransferNeverStartedSaysItWaitedForAConnection() {
        _ = check([(.deadline, "abort, waiting for a connection")])
        _ = check([(.start, "running"), (.deadline, "abort, waiting for a connection")])
        _ = check([(.start, "running"), (.head("HTTP/1.1 200 OK"), "new 200"), (.deadline, "abort")])
    }

    func testTheFirstBytesWatchFailsOnlyASilentServerOnItsOwnSocket() {
        var m = TransferMachine(askingHead: false)
        m.started()
        XCTAssertTrue(m.silentServer(ownSocket: true, received: { 0 }))
        XCTAssertFalse(m.silentServer(ownSocket: false, received: { 0 }), "a shared connection: another transfer's bytes")
        XCTAssertFalse(m.silentServer(ownSocket: true, received: { 9 }), "bytes came: a slow server, not a silent one")
        _ = drive(&m, .head("HTTP/2 200"))
        XCTAssertFalse(m.silentServer(ownSocket: true, received: { 0 }))
    }
}
