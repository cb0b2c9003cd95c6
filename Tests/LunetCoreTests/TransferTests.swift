import Foundation
import XCTest
@testable import LunetCore

/// A transfer's life on its own: created, running once started, finished once its completion
/// has run; the completion runs once whatever ends it; a cancel ends it with kind `cancelled`.
final class TransferTests: XCTestCase {
    func testLifecycleCreatedRunningFinished() {
        let loop = EventLoop()
        var statesSeenByCompletion: [Transfer.State] = []
        var status = 0
        var t: Transfer!
        t = Transfer(request: HTTPRequest(url: httpbinURL() + "/get")) { result in
            statesSeenByCompletion.append(t.state)
            if case .success(let r) = result { status = r.status }
        }
        XCTAssertEqual(t.state, .created)
        loop.start(t, cookies: nil)
        XCTAssertEqual(t.state, .running)
        XCTAssertEqual(loop.liveTransfers, 1)
        loop.run { t.state == .finished }
        XCTAssertEqual(t.state, .finished)
        XCTAssertEqual(statesSeenByCompletion, [.finished], "finished before its completion runs, and once")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(loop.liveTransfers, 0)
    }

    func testAStartedTransferIsNotStartedAgain() {
        let loop = EventLoop()
        var completions = 0
        let t = Transfer(request: HTTPRequest(url: httpbinURL() + "/get")) { _ in completions += 1 }
        loop.start(t, cookies: nil)
        loop.start(t, cookies: nil)
        XCTAssertEqual(loop.liveTransfers, 1)
        loop.run { false }
        XCTAssertEqual(completions, 1)
    }

    func testTheCompletionRunsOnceWhateverEndsTheTransfer() {
        var results: [String] = []
        let t = Transfer(request: HTTPRequest(url: "http://127.0.0.1:1/")) { result in
            switch result {
            case .success(let r): results.append("success \(r.status)")
            case .failure(let e): results.append("failure \(e.kind)")
            }
        }
        t.finish(.failure(LunetError(.connect, "first")))
        t.finish(.success(cacheResponse(200)))
        t.finish(.failure(LunetError(.cancelled, "forced")), force: true)
        XCTAssertEqual(results, ["failure connect"])
        XCTAssertEqual(t.state, .finished)
    }

    func testCancellingARunningTransferEndsItAsCancelledAtOnce() {
        let loop = EventLoop()
        var result: Result<HTTPResponse, LunetError>?
        let t = loop.start(HTTPRequest(url: httpbinURL() + "/delay/10")) { result = $0 }
        loop.runOnce(wait: false)                    // on the network
        loop.cancel(t, reason: "enough")
        guard case .failure(let e)? = result else { return XCTFail("not ended by the cancel: \(String(describing: result))") }
        XCTAssertEqual(e.kind, .cancelled)
        XCTAssertEqual(e.message, "enough")
        XCTAssertEqual(t.state, .finished)
        XCTAssertEqual(loop.liveTransfers, 0, "its handle left curl")
        XCTAssertTrue(loop.isIdle)
    }

    func testCancellingAFinishedTransferChangesNothing() {
        let loop = EventLoop()
        var results: [Result<HTTPResponse, LunetError>] = []
        let t = loop.start(HTTPRequest(url: httpbinURL() + "/get")) { results.append($0) }
        loop.run { !results.isEmpty }
        loop.cancel(t)
        XCTAssertEqual(results.count, 1)
        if case .success(let r) = results[0] { XCTAssertEqual(r.status, 200) } else { XCTFail("\(results[0])") }
    }

    func testAFailedConnectionIsAConnectFailureNotACancel() {
        let loop = EventLoop()
        var result: Result<HTTPResponse, LunetError>?
        let t = loop.start(HTTPRequest(url: "http://127.0.0.1:1/")) { result = $0 }
        loop.run { result != nil }
        guard case .failure(let e)? = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(e.kind, .connect)
        XCTAssertEqual(t.state, .finished)
    }
}
