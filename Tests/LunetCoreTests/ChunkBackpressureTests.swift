import Foundation
import XCTest
@testable import LunetCore

/// A streamed body goes to its consumer one batch at a time: while the consumer is busy with a
/// batch nothing more is handed over, and once `chunkBufferLimit` bytes wait the body is paused
/// (libcurl's CURL_WRITEFUNC_PAUSE) instead of being buffered without bound.
final class ChunkBackpressureTests: XCTestCase {
    /// An 8 MB file in the test nginx's root; its URL and bytes.
    struct NoServer: Error {}

    func bigFile() throws -> (url: String, bytes: [UInt8]) {
        let env = ProcessInfo.processInfo.environment
        guard let nginx = env["LUNET_NGINX"], let www = env["LUNET_NGINX_WWW"] else {
            // A failure, not a skip: scripts/test always starts nginx (as httpbinURL() does).
            XCTFail("LUNET_NGINX is not set: run the tests with scripts/test")
            throw NoServer()
        }
        var bytes = [UInt8](repeating: 0, count: 8 << 20)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for i in bytes.indices {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            bytes[i] = UInt8(truncatingIfNeeded: state >> 33)
        }
        let path = www + "/backpressure-8m.bin"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)), "writing \(path)")
        return (nginx + "/backpressure-8m.bin", bytes)
    }

    func testASlowConsumerPausesTheBodyAndGetsEveryByteInOrder() throws {
        let (url, expected) = try bigFile()
        let loop = EventLoop()
        let session = Session(loop: loop)
        let limit = 256 << 10
        var received: [UInt8] = []
        var largestHeld = 0          // bytes handed over in one batch
        var batches = 0
        var pausedSeen = false
        var completedWhileBusy = false
        var outcome: Result<HTTPResponse, LunetError>?
        var transfer: Transfer?
        transfer = session.send(HTTPRequest(url: url), configure: { t in
            t.streamChunks = true
            t.chunkBufferLimit = limit
            t.onEvents = { t, chunks in
                batches += 1
                let n = chunks.reduce(0) { $0 + $1.count }
                largestHeld = max(largestHeld, n)
                for c in chunks { received += c.bytes }
                // A consumer that waits: it finishes its batch on a later turn, 5 ms on.
                loop.addTimer(after: 0.005) {
                    pausedSeen = pausedSeen || t.machine.flow.paused
                    t.consumerFinished()
                }
            }
        }) { result in
            completedWhileBusy = transfer?.consumerBusy ?? false
            outcome = result
        }
        loop.run { outcome != nil }
        guard case .success(let r)? = outcome else { return XCTFail("the transfer failed: \(String(describing: outcome))") }
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(received.count, expected.count, "every byte once")
        XCTAssertTrue(received == expected, "the bytes arrive in order")
        XCTAssertTrue(pausedSeen, "the body was paused while the consumer was behind")
        // One batch holds at most the limit plus what curl handed over in the write that crossed it.
        XCTAssertLessThanOrEqual(largestHeld, limit + (512 << 10), "batches stay bounded (\(batches) batches)")
        XCTAssertFalse(completedWhileBusy, "the transfer completed only after its consumer was through")
    }

    /// Streams the big file to a consumer that never finishes its first batch and cancels the
    /// transfer from there (its callback names the transfer); runs the loop until it is over.
    private func cancelFromABusyConsumer(_ loop: EventLoop) throws -> (outcome: Result<HTTPResponse, LunetError>?, transfer: Transfer) {
        let (url, _) = try bigFile()
        let session = Session(loop: loop)
        var outcome: Result<HTTPResponse, LunetError>?
        var transfer: Transfer!
        transfer = session.send(HTTPRequest(url: url), configure: { t in
            t.streamChunks = true
            t.chunkBufferLimit = 64 << 10
            t.onEvents = { _, _ in loop.addTimer(after: 0) { loop.cancel(transfer) } }
        }) { outcome = $0 }
        loop.run { outcome != nil }
        return (outcome, transfer)
    }

    func testACancelWhileTheConsumerIsBusyCompletesAtOnce() throws {
        let loop = EventLoop()
        let outcome = try cancelFromABusyConsumer(loop).outcome
        guard case .failure(let e)? = outcome else { return XCTFail("expected a cancel, got \(String(describing: outcome))") }
        XCTAssertEqual(e.kind, .cancelled)
        XCTAssertEqual(loop.liveTransfers, 0)
    }

    func testAFinishedTransferLetsGoOfACallbackThatNamesIt() throws {
        // The callback holds its transfer; once the transfer is over, neither may keep the other
        // alive (AddressSanitizer reported the pair, with its curl handle, as leaked).
        let loop = EventLoop()
        weak var gone: Transfer?
        do {
            let (outcome, transfer) = try cancelFromABusyConsumer(loop)
            XCTAssertNotNil(outcome)
            gone = transfer
        }   // the helper's variable is gone too; only the callback could still name the transfer
        loop.runOnce(wait: false)   // one more turn: whatever the loop still held is let go
        XCTAssertNil(gone, "the transfer was freed")
    }
}
